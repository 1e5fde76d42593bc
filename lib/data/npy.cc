#include "data/npy.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "core/error.h"

namespace pstrain::data {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;  // far beyond memory, far below overflow
constexpr std::size_t kMaxRank = 32;                            // NumPy's own limit (NPY_MAXDIMS)

[[noreturn]] void bad(const std::string& name, const std::string& problem) {
  throw Error(ExitCode::kInputData, cat(name, ": ", problem));
}

struct TypeInfo {
  NpyType type;
  std::size_t size;
};

// '<' little-endian, '|' not applicable (one byte), '=' native (little-endian on every machine pstrain builds for).
std::optional<TypeInfo> type_of(const std::string& descr) {
  static const std::map<std::string, TypeInfo> types{
      {"u1", {NpyType::kUint8, 1}}, {"i1", {NpyType::kInt8, 1}},    {"u2", {NpyType::kUint16, 2}},
      {"i2", {NpyType::kInt16, 2}}, {"u4", {NpyType::kUint32, 4}},  {"i4", {NpyType::kInt32, 4}},
      {"i8", {NpyType::kInt64, 8}}, {"f4", {NpyType::kFloat32, 4}}, {"f8", {NpyType::kFloat64, 8}},
  };
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  const auto found = types.find(descr.substr(1));
  if (found == types.end()) return std::nullopt;
  const bool one_byte = found->second.size == 1;
  if (order == '<' || order == '=' || (order == '|' && one_byte)) return found->second;
  return std::nullopt;
}

// The header's Python dict literal, as numpy.lib.format writes it (and ast.literal_eval reads it): string keys,
// and values that are strings, True/False, or tuples of integers.
class HeaderParser {
 public:
  HeaderParser(std::string text, std::string name) : text_(std::move(text)), name_(std::move(name)) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::uint64_t>> shape;
  };

  Fields parse() {
    Fields fields;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (!peek('\'') && !peek('"')) fail("'descr' is not a type string (a structured array?)");
        fields.descr = string_literal();
      } else if (key == "fortran_order") {
        fields.fortran_order = boolean();
      } else if (key == "shape") {
        fields.shape = tuple();
      } else {
        fail(cat("unknown key '", key, "'"));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (position_ != text_.size()) fail("text after the closing '}'");
    return fields;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    bad(name_, cat("bad .npy header (", problem, "): ", text_));
  }
  void skip_space() {
    while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\n')) ++position_;
  }
  bool peek(char c) {
    skip_space();
    return position_ < text_.size() && text_[position_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(cat("expected '", c, "'"));
    ++position_;
  }
  std::string string_literal() {
    skip_space();
    if (position_ >= text_.size() || (text_[position_] != '\'' && text_[position_] != '"')) fail("expected a string");
    const char quote = text_[position_++];
    const std::size_t end = text_.find(quote, position_);
    if (end == std::string::npos) fail("unterminated string");
    std::string value = text_.substr(position_, end - position_);
    position_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.compare(position_, std::strlen(word), word) == 0) {
        position_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False");
  }
  std::uint64_t integer() {
    skip_space();
    std::uint64_t value = 0;
    const std::size_t start = position_;
    while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') {
      if (value > kMaxElements) fail("a dimension is implausibly large");
      value = value * 10 + static_cast<std::uint64_t>(text_[position_++] - '0');
    }
    if (position_ == start) fail("expected a dimension (a whole number)");
    if (position_ < text_.size() && text_[position_] == 'L') ++position_;  // Python 2's long literals
    return value;
  }
  std::vector<std::uint64_t> tuple() {
    std::vector<std::uint64_t> values;
    expect('(');
    while (!peek(')')) {
      values.push_back(integer());
      if (values.size() > kMaxRank) fail(cat("more than ", kMaxRank, " dimensions"));
      if (!peek(')')) expect(',');
    }
    expect(')');
    return values;
  }

  std::string text_;
  std::string name_;
  std::size_t position_ = 0;
};

std::uint32_t little_endian(const std::uint8_t* bytes, std::size_t size) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value |= std::uint32_t{bytes[i]} << (8 * i);
  return value;
}

// The header text after the magic: version 1.0 has a 2-byte length, 2.0 and 3.0 (UTF-8 header) a 4-byte one.
std::string header_text(const std::vector<std::uint8_t>& bytes, const std::string& name, std::size_t& data_offset) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    bad(name, "not a .npy file (no \\x93NUMPY magic; numpy.save writes one)");
  }
  const std::uint8_t major = bytes[kMagicSize], minor = bytes[kMagicSize + 1];
  if (major < 1 || major > 3 || minor != 0) {
    bad(name, cat(".npy format version ", int{major}, ".", int{minor}, " is not one of 1.0, 2.0, 3.0"));
  }
  const std::size_t length_size = major == 1 ? 2 : 4;
  const std::size_t length_offset = kMagicSize + 2;
  if (bytes.size() < length_offset + length_size) bad(name, "truncated inside the .npy header");
  const std::size_t length = little_endian(bytes.data() + length_offset, length_size);
  data_offset = length_offset + length_size + length;
  if (bytes.size() < data_offset) bad(name, cat("truncated inside the .npy header (", length, " bytes announced)"));
  std::string text(bytes.begin() + static_cast<std::ptrdiff_t>(length_offset + length_size),
                   bytes.begin() + static_cast<std::ptrdiff_t>(data_offset));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

// "(3, 4)", "(5,)": a shape as NumPy prints it, for messages about .npy files.
std::string numpy_shape(const std::vector<std::uint64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += cat(i ? ", " : "", shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::uint64_t NpyArray::element_count() const {
  std::uint64_t count = 1;
  for (const std::uint64_t dim : shape) count *= dim;  // bounded by parse_npy
  return count;
}

std::size_t NpyArray::element_size() const {
  switch (type) {
    case NpyType::kUint8:
    case NpyType::kInt8: return 1;
    case NpyType::kUint16:
    case NpyType::kInt16: return 2;
    case NpyType::kUint32:
    case NpyType::kInt32:
    case NpyType::kFloat32: return 4;
    case NpyType::kInt64:
    case NpyType::kFloat64: return 8;
  }
  return 0;
}

NpyArray parse_npy(std::vector<std::uint8_t> bytes, const std::string& name) {
  std::size_t data_offset = 0;
  const HeaderParser::Fields fields = HeaderParser(header_text(bytes, name, data_offset), name).parse();
  if (!fields.descr || !fields.fortran_order || !fields.shape) {
    bad(name, "the .npy header lacks one of 'descr', 'fortran_order', 'shape'");
  }
  NpyArray array;
  array.descr = *fields.descr;
  const std::optional<TypeInfo> type = type_of(array.descr);
  if (!type && !array.descr.empty() && array.descr[0] == '>') {
    bad(name, cat("element type '", array.descr, "' is big-endian; store it little-endian (numpy: a.astype('<",
                  array.descr.substr(1), "'))"));
  }
  if (!type) {
    bad(name, cat("element type '", array.descr,
                  "' is not supported: features must be uint8, float32 or float64 and labels integers, "
                  "little-endian (numpy: a.astype('float32') or a.astype('int64'))"));
  }
  array.type = type->type;
  if (*fields.fortran_order) {
    bad(name, "the array is stored in Fortran order; save it in C order (numpy: np.ascontiguousarray(a))");
  }
  array.shape = *fields.shape;
  std::uint64_t count = 1;
  for (const std::uint64_t dim : array.shape) {
    if (dim != 0 && count > kMaxElements / dim)
      bad(name, cat("shape ", numpy_shape(array.shape), " is implausibly large"));
    count *= dim;
  }
  const std::uint64_t expected = count * type->size, present = bytes.size() - data_offset;
  if (present != expected) {
    bad(name, cat("shape ", numpy_shape(array.shape), " of '", array.descr, "' needs ", expected, " bytes of data but ",
                  present < expected ? "only " : "", present, " follow the header",
                  present < expected ? " (truncated file)" : " (trailing bytes)"));
  }
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(data_offset));  // in place: arrays are large
  array.data = std::move(bytes);
  return array;
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path.string(), "cannot open the file (does it exist?)");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) bad(path.string(), "read error");
  return parse_npy(std::move(bytes), path.string());
}

namespace {

template <typename T>
T element(const NpyArray& array, std::uint64_t index) {
  T value;
  std::memcpy(&value, array.data.data() + index * sizeof(T), sizeof(T));  // little-endian host (x86-64, arm64)
  return value;
}

}  // namespace

std::vector<float> npy_features(const NpyArray& array, const std::string& name) {
  if (array.shape.empty() || array.shape[0] == 0) {
    bad(name, cat("features of shape ", numpy_shape(array.shape), " hold no samples (expected (samples, ...))"));
  }
  const std::uint64_t count = array.element_count();
  std::vector<float> features(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    double value = 0;
    switch (array.type) {
      case NpyType::kUint8: value = element<std::uint8_t>(array, i) / 255.0; break;
      case NpyType::kFloat32: value = element<float>(array, i); break;
      case NpyType::kFloat64: value = element<double>(array, i); break;
      default:
        bad(name, cat("features of element type '", array.descr,
                      "' are not supported: use uint8 (images, scaled to [0, 1]), float32 or float64 "
                      "(numpy: x.astype('float32'))"));
    }
    if (!std::isfinite(value) || std::fabs(value) > std::numeric_limits<float>::max()) {
      const std::uint64_t size = count / array.shape[0];
      bad(name,
          cat("feature ", i % size, " of sample ", i / size, " is ", value, ", which is not a finite float32 value"));
    }
    features[i] = static_cast<float>(value);
  }
  return features;
}

namespace {

// Element `i` of an integer array, whatever its width and sign; refuses float and other types naming `what`.
std::int64_t integer_element(const NpyArray& array, std::uint64_t i, const std::string& name, const char* what) {
  switch (array.type) {
    case NpyType::kUint8: return element<std::uint8_t>(array, i);
    case NpyType::kInt8: {  // two's complement, read as its byte (no signed char conversion to get wrong)
      const std::int64_t byte = element<std::uint8_t>(array, i);
      return byte >= 128 ? byte - 256 : byte;
    }
    case NpyType::kUint16: return element<std::uint16_t>(array, i);
    case NpyType::kInt16: return element<std::int16_t>(array, i);
    case NpyType::kUint32: return element<std::uint32_t>(array, i);
    case NpyType::kInt32: return element<std::int32_t>(array, i);
    case NpyType::kInt64: return element<std::int64_t>(array, i);
    default:
      bad(name, cat(what, " of element type '", array.descr,
                    "' are not supported: they are integers (numpy: ", "a.astype('int64'))"));
  }
  return 0;
}

}  // namespace

std::vector<std::int32_t> npy_labels(const NpyArray& array, const std::string& name) {
  if (array.shape.size() != 1) {
    bad(name, cat("labels have shape ", numpy_shape(array.shape),
                  "; expected one integer per sample, (samples,) "
                  "(numpy: y.reshape(-1))"));
  }
  std::vector<std::int32_t> labels(array.shape[0]);
  for (std::uint64_t i = 0; i < array.shape[0]; ++i) {
    const std::int64_t value = integer_element(array, i, name, "class labels");
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
      bad(name, cat("label ", value, " of sample ", i, " is not a class index (0, 1, 2, ...)"));
    }
    labels[i] = static_cast<std::int32_t>(value);
  }
  return labels;
}

std::vector<float> npy_word_ids(const NpyArray& array, std::uint64_t vocab_size, const std::string& name) {
  if (array.shape.empty() || array.shape[0] == 0) {
    bad(name, cat("word ids of shape ", numpy_shape(array.shape), " hold no samples (expected (samples, context))"));
  }
  const std::uint64_t count = array.element_count();
  std::vector<float> ids(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int64_t id = integer_element(array, i, name, "word ids");
    if (id < 0 || static_cast<std::uint64_t>(id) >= vocab_size) {
      bad(name, cat("holds ", id, ", not a word id in [0, ", vocab_size, ")"));
    }
    ids[i] = static_cast<float>(id);  // exact: vocabularies are far below 2^24 words
  }
  return ids;
}

}  // namespace pstrain::data
