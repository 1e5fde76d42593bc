#pragma once
// `mpirun -np N pstrain evaluate PASS_FOLDER [--num-pservers S]`: the evaluation shared among N ranks. Without
// --num-pservers every rank is an evaluator; with it ranks 0..S-1 serve the model's row tables (served_tables.h:
// an NPLM's embedding, a click model's embedding_bag tables) and ranks S..N-1 evaluate. Each evaluator reads its
// share of the samples (evaluation_ranks.h: whole batches, contiguous), and rank 0 alone writes the JSON and
// prints the figures, which equal one process's.
//
// Who waits for whom (every failure a user can cause is agreed at the next meeting: the lowest failing rank prints
// the one message, every rank exits with its code; comm/communicator.h agree_on_failure):
//   1. every rank parses the flags and reads what it needs: a server the model's description (and checks that the
//      pass folder holds its tables), an evaluator the parameters (without the served tables) and its samples;
//      rank 0 checks that the output can be written. Meeting: agree on failures.
//   2. with servers: the tables' windows (collective), then each server reads its rows into them. Meeting: agree.
//   3. evaluators score their batches (fetching rows one-sidedly); servers wait in EvaluationDone, calling MPI;
//      evaluators enter it after their last batch (or their failure). Meeting: agree on failures.
//   4. the sums are added up at rank 0 (sum_over_ranks), a click model's predictions gathered there and merged
//      into one sorted run (8 bytes per test sample at rank 0), so its AUC, log-loss, NE and calibration are one
//      process's to the bit; rank 0 writes and prints. Meeting: agree (its write).
// An unexpected failure (an MPI error) ends the whole job (MPI_Abort), so no rank is left waiting.
namespace pstrain::inference {

// argv[0] is "evaluate". Initialises MPI (comm/environment.h) and finalises it before returning the exit code,
// the same on every rank.
int evaluate_on_ranks(int argc, char** argv);

}  // namespace pstrain::inference
