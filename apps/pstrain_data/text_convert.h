#pragma once
#include "options.h"

namespace pstrain_data {

// pstrain-data brown|text: reads the corpus, builds the vocabulary from the training text, cuts every split
// into N-gram windows and writes OUTPUT/vocab.txt, train-NNNNN.h5, valid.h5 (when there is a validation split)
// and test.h5. Everything is read and checked before anything is written: bad input writes nothing.
void convert_text(const Options& options);

}  // namespace pstrain_data
