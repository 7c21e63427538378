// Vocab: the tokenizer description carried in GGUF metadata, with llama.cpp's key names and
// defaults, plus the way back into a gguf::Writer (make-model) and the import from a Hugging Face
// tokenizer.json.
// A Vocab is a plain value; it owns no resources and may be copied and shared freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace ds::text {

// Values as stored in tokenizer.ggml.token_type (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

inline constexpr char kModelSpm[] = "llama";  // SentencePiece, scores-based merging
inline constexpr char kModelBpe[] = "gpt2";   // byte-level BPE with merge ranks

// deltaserve's own key: the Unicode normalization the source tokenizer applies before
// pre-tokenizing ("nfc" or absent). llama.cpp ignores it; files converted by llama.cpp lack it,
// so their tokenisation stays identical to llama.cpp's.
inline constexpr char kNormalizerKey[] = "tokenizer.deltaserve.normalizer";

struct Vocab {
  std::string model;  // kModelSpm or kModelBpe
  std::string pre;    // BPE pre-tokenizer name (tokenizer.ggml.pre), e.g. "qwen2", "llama-bpe"
  std::vector<std::string> tokens;     // id -> text; BPE tokens in byte-level form
  std::vector<float> scores;           // id -> score; empty when the file has none
  std::vector<TokenType> token_types;  // id -> type; same size as tokens
  std::vector<std::string> merges;     // BPE: "left right", rank = index
  // Special ids after llama.cpp's defaults (llama: bos 1, eos 2, unk 0; gpt2: bos 11, eos 11);
  // -1 when absent.
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t eot_id = -1;
  int32_t pad_id = -1;
  int32_t unk_id = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prefix the text with a space (llama.cpp default: true)
  std::string normalizer;         // "" or "nfc"
  std::string chat_template;      // tokenizer.chat_template, may be empty

  int32_t num_tokens() const { return static_cast<int32_t>(tokens.size()); }
};

// Reads the tokenizer keys. Errors name the key: missing tokenizer.ggml.model or tokens, gpt2
// without merges, wrong value types, arrays shorter than the token list, unknown model.
StatusOr<Vocab> LoadVocab(const gguf::File& file);

// Writes every key LoadVocab reads. LoadVocab(written) == vocab, except that an absent (-1)
// bos/eos/unk id comes back as llama.cpp's default for the model (gpt2: bos = eos = 11).
void WriteVocab(const Vocab& vocab, gguf::Writer* writer);

// Imports a byte-level BPE tokenizer.json (model.type "BPE": vocab, merges in either string or
// pair form, added_tokens). `tokenizer_config_path` may be empty; when given it supplies the chat
// template, bos/eos/pad tokens and add_bos/add_eos. Added tokens become control tokens when
// special (or when they look special, as llama.cpp's converter decides), else user-defined.
// The pre-tokenizer is recognised from its split regex (Qwen2/Qwen3 -> "qwen2", Qwen3.5 ->
// "qwen35", Llama 3 -> "llama-bpe", GPT-2 -> "gpt-2").
StatusOr<Vocab> ImportHfTokenizer(const std::string& tokenizer_json_path,
                                  const std::string& tokenizer_config_path);

}  // namespace ds::text
