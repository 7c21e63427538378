#include "text/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "base/check.h"
#include "text/unicode.h"

namespace ds::text {
namespace {

// The regexes are llama.cpp's (llama-vocab.cpp), which already rewrite "(?i:'s|...)" as explicit
// character classes so that case folding cannot match beyond ASCII.
constexpr char kGpt2Regex[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr char kLlama3Regex[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr char kQwen2Regex[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr char kQwen35Regex[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|)"
    R"(\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// deepseek-coder's CJK run: U+4E00-U+9FA5, U+0800-U+4E00, U+AC00-U+D7FF.
constexpr char kDeepseekCjkRegex[] = R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

// llama.cpp's \s is Unicode White_Space (its collapsed std::regex maps every such code point to a
// whitespace byte); PCRE2's own \s differs for U+0085, so it is spelled out.
constexpr char kWhiteSpaceSet[] =
    R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// Rewrites \s and \S into explicit classes over kWhiteSpaceSet.
std::string ExpandWhiteSpace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        out += in_class ? std::string(kWhiteSpaceSet) : "[" + std::string(kWhiteSpaceSet) + "]";
      } else if (next == 'S') {
        DS_CHECK_MSG(!in_class, "\\S inside a character class is not supported");
        out += "[^" + std::string(kWhiteSpaceSet) + "]";
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (c == '[' && !in_class) in_class = true;
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct PreSpec {
  std::initializer_list<const char*> names;
  std::initializer_list<const char*> regexes;
  bool ignore_merges;
};

const PreSpec kPreSpecs[] = {
    {{"gpt-2", "mpt", "olmo", "phi-2"}, {kGpt2Regex}, false},
    {{"llama3", "llama-v3", "llama-bpe"}, {kLlama3Regex}, true},
    {{"dbrx", "smaug-bpe"}, {kLlama3Regex}, false},
    {{"qwen2", "deepseek-r1-qwen", "stablelm2"}, {kQwen2Regex}, false},
    {{"qwen35"}, {kQwen35Regex}, false},
    {{"deepseek-coder"},
     {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjkRegex, R"(\p{N})"},
     false},
    {{"", "default"},
     {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Regex, R"(\p{N}+)", R"([0-9][0-9][0-9])"},
     false},
};

// A code point range [begin, end) of the text.
using Piece = std::pair<size_t, size_t>;

}  // namespace

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::~PreTokenizer() = default;

StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::Create(std::string_view pre_name) {
  const PreSpec* spec = nullptr;
  for (const PreSpec& s : kPreSpecs) {
    for (const char* name : s.names) {
      if (pre_name == name) spec = &s;
    }
  }
  if (spec == nullptr) {
    return UnimplementedError("unsupported BPE pre-tokenizer '" + std::string(pre_name) + "'");
  }
  std::unique_ptr<PreTokenizer> pre(new PreTokenizer());
  pre->ignore_merges_ = spec->ignore_merges;
  for (const char* pattern : spec->regexes) {
    const std::string expanded = ExpandWhiteSpace(pattern);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    auto regex = std::make_unique<Regex>();
    regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expanded.data()), expanded.size(),
                                PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
    DS_CHECK_MSG(regex->code != nullptr, "built-in pre-tokenizer regex does not compile");
    // JIT is an optimisation only; the interpreter gives the same matches when it is unavailable.
    (void)pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);
    pre->regexes_.push_back(std::move(regex));
  }
  return pre;
}

std::vector<std::string> PreTokenizer::Split(std::string_view text) const {
  const std::vector<uint32_t> cps = CodepointsFromUtf8(text);
  // The regex subject: the code points re-encoded, surrogates (which PCRE2 rejects) read as
  // U+FFFD. Both take three bytes, so byte offsets line up with the words built from `cps`.
  std::string subject;
  std::vector<size_t> cp_at_byte;  // code point index at each byte offset (valid at boundaries)
  subject.reserve(text.size());
  cp_at_byte.reserve(text.size() + 1);
  std::vector<size_t> byte_at_cp(cps.size() + 1);
  for (size_t i = 0; i < cps.size(); ++i) {
    byte_at_cp[i] = subject.size();
    const bool surrogate = cps[i] >= 0xD800 && cps[i] <= 0xDFFF;
    AppendUtf8(surrogate ? kReplacementChar : cps[i], &subject);
    cp_at_byte.resize(subject.size(), i);
  }
  byte_at_cp[cps.size()] = subject.size();
  cp_at_byte.push_back(cps.size());

  std::vector<Piece> pieces;
  if (!cps.empty()) pieces.push_back({0, cps.size()});
  for (const auto& regex : regexes_) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(regex->code, nullptr);
    DS_CHECK(match != nullptr);
    std::vector<Piece> next;
    next.reserve(pieces.size() * 2);
    for (const auto& [begin, end] : pieces) {
      // The subject ends where the piece ends, so lookaheads stop there as in llama.cpp.
      const auto* base = reinterpret_cast<PCRE2_SPTR>(subject.data() + byte_at_cp[begin]);
      const size_t length = byte_at_cp[end] - byte_at_cp[begin];
      size_t done = 0;  // bytes of the piece already emitted
      while (done < length) {
        const int rc =
            pcre2_match(regex->code, base, length, done, PCRE2_NO_UTF_CHECK, match, nullptr);
        if (rc <= 0) break;  // no match, or a resource limit: the rest stays one piece
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        if (ovector[1] == ovector[0]) break;  // none of the built-in regexes matches empty
        const size_t at = byte_at_cp[begin];
        if (ovector[0] > done) next.push_back({cp_at_byte[at + done], cp_at_byte[at + ovector[0]]});
        next.push_back({cp_at_byte[at + ovector[0]], cp_at_byte[at + ovector[1]]});
        done = ovector[1];
      }
      if (done < length) next.push_back({cp_at_byte[byte_at_cp[begin] + done], end});
    }
    pcre2_match_data_free(match);
    pieces = std::move(next);
  }

  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (const auto& [begin, end] : pieces) {
    std::string word;
    for (size_t i = begin; i < end; ++i) AppendUtf8(cps[i], &word);
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace ds::text
