#include "text/vocab.h"

#include <string_view>
#include <utility>

namespace ds::text {
namespace {

constexpr char kKeyModel[] = "tokenizer.ggml.model";
constexpr char kKeyPre[] = "tokenizer.ggml.pre";
constexpr char kKeyTokens[] = "tokenizer.ggml.tokens";
constexpr char kKeyScores[] = "tokenizer.ggml.scores";
constexpr char kKeyTokenType[] = "tokenizer.ggml.token_type";
constexpr char kKeyMerges[] = "tokenizer.ggml.merges";
constexpr char kKeyBos[] = "tokenizer.ggml.bos_token_id";
constexpr char kKeyEos[] = "tokenizer.ggml.eos_token_id";
constexpr char kKeyEot[] = "tokenizer.ggml.eot_token_id";
constexpr char kKeyPad[] = "tokenizer.ggml.padding_token_id";
constexpr char kKeyUnk[] = "tokenizer.ggml.unknown_token_id";
constexpr char kKeyAddBos[] = "tokenizer.ggml.add_bos_token";
constexpr char kKeyAddEos[] = "tokenizer.ggml.add_eos_token";
constexpr char kKeyAddSpacePrefix[] = "tokenizer.ggml.add_space_prefix";
constexpr char kKeyChatTemplate[] = "tokenizer.chat_template";

// An array-valued key with the given element type, or nullptr when absent.
StatusOr<const gguf::Array*> FindArray(const gguf::File& file, std::string_view key,
                                       std::initializer_list<gguf::ValueType> element_types) {
  const gguf::Value* value = file.Find(key);
  if (value == nullptr) return static_cast<const gguf::Array*>(nullptr);
  const auto* array = std::get_if<gguf::Array>(&value->data);
  bool type_ok = false;
  for (gguf::ValueType t : element_types) type_ok |= array != nullptr && array->element_type == t;
  if (!type_ok) {
    return InvalidArgumentError(std::string(key) + ": expected an array of " +
                                std::string(gguf::ValueTypeName(*element_types.begin())));
  }
  return array;
}

Status ReadStrings(const gguf::Array& array, std::string_view key, std::vector<std::string>* out) {
  out->reserve(array.items.size());
  for (const gguf::Value& item : array.items) {
    const auto* s = std::get_if<std::string>(&item.data);
    if (s == nullptr) return InvalidArgumentError(std::string(key) + ": non-string element");
    out->push_back(*s);
  }
  return OkStatus();
}

Status ReadOptionalBool(const gguf::File& file, const char* key, bool* out) {
  if (file.Find(key) == nullptr) return OkStatus();
  DS_ASSIGN_OR_RETURN(*out, file.GetBool(key));
  return OkStatus();
}

// llama.cpp: a stored id outside the vocabulary is ignored and the default kept.
Status ReadSpecialId(const gguf::File& file, const char* key, int32_t num_tokens, int32_t* id) {
  if (*id >= num_tokens) *id = -1;  // a default that does not fit this vocabulary
  if (file.Find(key) == nullptr) return OkStatus();
  DS_ASSIGN_OR_RETURN(uint64_t stored, file.GetUint(key));
  if (stored < static_cast<uint64_t>(num_tokens)) *id = static_cast<int32_t>(stored);
  return OkStatus();
}

Status ReadTokenArrays(const gguf::File& file, Vocab* vocab) {
  DS_ASSIGN_OR_RETURN(const gguf::Array* tokens,
                      FindArray(file, kKeyTokens, {gguf::ValueType::kString}));
  if (tokens == nullptr) return NotFoundError(std::string(kKeyTokens) + " is missing");
  DS_RETURN_IF_ERROR(ReadStrings(*tokens, kKeyTokens, &vocab->tokens));
  const size_t n = vocab->tokens.size();

  DS_ASSIGN_OR_RETURN(
      const gguf::Array* scores,
      FindArray(file, kKeyScores, {gguf::ValueType::kFloat32, gguf::ValueType::kInt32}));
  if (scores != nullptr) {
    if (scores->items.size() < n)
      return InvalidArgumentError(std::string(kKeyScores) + " is shorter than the token list");
    vocab->scores.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& data = scores->items[i].data;
      if (const auto* d = std::get_if<double>(&data)) {
        vocab->scores[i] = static_cast<float>(*d);
      } else {
        vocab->scores[i] = static_cast<float>(std::get<int64_t>(data));
      }
    }
  }

  vocab->token_types.assign(n, TokenType::kNormal);
  DS_ASSIGN_OR_RETURN(const gguf::Array* types,
                      FindArray(file, kKeyTokenType, {gguf::ValueType::kInt32}));
  if (types != nullptr) {
    if (types->items.size() < n)
      return InvalidArgumentError(std::string(kKeyTokenType) + " is shorter than the token list");
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = std::get<int64_t>(types->items[i].data);
      vocab->token_types[i] =
          (t >= 0 && t <= 6) ? static_cast<TokenType>(t) : TokenType::kUndefined;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Vocab> LoadVocab(const gguf::File& file) {
  Vocab vocab;
  if (file.Find(kKeyModel) == nullptr) return NotFoundError(std::string(kKeyModel) + " is missing");
  DS_ASSIGN_OR_RETURN(vocab.model, file.GetString(kKeyModel));
  if (file.Find(kKeyPre) != nullptr) {
    DS_ASSIGN_OR_RETURN(vocab.pre, file.GetString(kKeyPre));
  }
  DS_RETURN_IF_ERROR(ReadTokenArrays(file, &vocab));
  const int32_t n = vocab.num_tokens();

  if (vocab.model == kModelSpm) {
    vocab.bos_id = 1;
    vocab.eos_id = 2;
    vocab.unk_id = 0;
    vocab.add_bos = true;
    vocab.add_space_prefix = true;
  } else if (vocab.model == kModelBpe) {
    DS_ASSIGN_OR_RETURN(const gguf::Array* merges,
                        FindArray(file, kKeyMerges, {gguf::ValueType::kString}));
    if (merges == nullptr)
      return NotFoundError(std::string(kKeyMerges) + " is missing (required by gpt2)");
    DS_RETURN_IF_ERROR(ReadStrings(*merges, kKeyMerges, &vocab.merges));
    vocab.bos_id = 11;
    vocab.eos_id = 11;
    // llama.cpp turns add_bos on by default for the Llama 3 family of pre-tokenizers.
    vocab.add_bos = vocab.pre == "llama3" || vocab.pre == "llama-v3" || vocab.pre == "llama-bpe";
  } else {
    return InvalidArgumentError(std::string(kKeyModel) + ": unsupported tokenizer model '" +
                                vocab.model + "'");
  }

  DS_RETURN_IF_ERROR(ReadSpecialId(file, kKeyBos, n, &vocab.bos_id));
  DS_RETURN_IF_ERROR(ReadSpecialId(file, kKeyEos, n, &vocab.eos_id));
  DS_RETURN_IF_ERROR(ReadSpecialId(file, kKeyEot, n, &vocab.eot_id));
  DS_RETURN_IF_ERROR(ReadSpecialId(file, kKeyPad, n, &vocab.pad_id));
  DS_RETURN_IF_ERROR(ReadSpecialId(file, kKeyUnk, n, &vocab.unk_id));
  DS_RETURN_IF_ERROR(ReadOptionalBool(file, kKeyAddBos, &vocab.add_bos));
  DS_RETURN_IF_ERROR(ReadOptionalBool(file, kKeyAddEos, &vocab.add_eos));
  DS_RETURN_IF_ERROR(ReadOptionalBool(file, kKeyAddSpacePrefix, &vocab.add_space_prefix));
  if (vocab.add_bos && vocab.bos_id < 0)
    return InvalidArgumentError(std::string(kKeyAddBos) + " is true, but no bos token is set");
  if (vocab.add_eos && vocab.eos_id < 0)
    return InvalidArgumentError(std::string(kKeyAddEos) + " is true, but no eos token is set");
  if (file.Find(kNormalizerKey) != nullptr) {
    DS_ASSIGN_OR_RETURN(vocab.normalizer, file.GetString(kNormalizerKey));
    if (!vocab.normalizer.empty() && vocab.normalizer != "nfc") {
      return InvalidArgumentError(std::string(kNormalizerKey) + ": unsupported '" +
                                  vocab.normalizer + "'");
    }
  }
  if (file.Find(kKeyChatTemplate) != nullptr) {
    DS_ASSIGN_OR_RETURN(vocab.chat_template, file.GetString(kKeyChatTemplate));
  }
  return vocab;
}

void WriteVocab(const Vocab& vocab, gguf::Writer* writer) {
  using gguf::Value;
  using gguf::ValueType;
  writer->Set(kKeyModel, Value::Str(vocab.model));
  if (!vocab.pre.empty()) writer->Set(kKeyPre, Value::Str(vocab.pre));

  std::vector<Value> tokens, types;
  tokens.reserve(vocab.tokens.size());
  types.reserve(vocab.token_types.size());
  for (const std::string& t : vocab.tokens) tokens.push_back(Value::Str(t));
  for (TokenType t : vocab.token_types) types.push_back(Value::I32(static_cast<int32_t>(t)));
  writer->Set(kKeyTokens, Value::Arr(ValueType::kString, std::move(tokens)));
  if (!vocab.scores.empty()) {
    std::vector<Value> scores;
    scores.reserve(vocab.scores.size());
    for (float s : vocab.scores) scores.push_back(Value::F32(s));
    writer->Set(kKeyScores, Value::Arr(ValueType::kFloat32, std::move(scores)));
  }
  writer->Set(kKeyTokenType, Value::Arr(ValueType::kInt32, std::move(types)));
  if (vocab.model == kModelBpe) {
    std::vector<Value> merges;
    merges.reserve(vocab.merges.size());
    for (const std::string& m : vocab.merges) merges.push_back(Value::Str(m));
    writer->Set(kKeyMerges, Value::Arr(ValueType::kString, std::move(merges)));
  }

  const std::pair<const char*, int32_t> ids[] = {{kKeyBos, vocab.bos_id},
                                                 {kKeyEos, vocab.eos_id},
                                                 {kKeyEot, vocab.eot_id},
                                                 {kKeyPad, vocab.pad_id},
                                                 {kKeyUnk, vocab.unk_id}};
  for (const auto& [key, id] : ids) {
    if (id >= 0) writer->Set(key, Value::U32(static_cast<uint32_t>(id)));
  }
  writer->Set(kKeyAddBos, Value::Bool(vocab.add_bos));
  writer->Set(kKeyAddEos, Value::Bool(vocab.add_eos));
  if (vocab.model == kModelSpm)
    writer->Set(kKeyAddSpacePrefix, Value::Bool(vocab.add_space_prefix));
  if (!vocab.normalizer.empty()) writer->Set(kNormalizerKey, Value::Str(vocab.normalizer));
  if (!vocab.chat_template.empty()) writer->Set(kKeyChatTemplate, Value::Str(vocab.chat_template));
}

}  // namespace ds::text
