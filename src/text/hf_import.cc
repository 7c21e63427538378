// ImportHfTokenizer (declared in vocab.h): tokenizer.json + tokenizer_config.json -> Vocab, making
// the choices llama.cpp's convert_hf_to_gguf.py makes for byte-level BPE models.
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/file_text.h"
#include "text/vocab.h"

namespace ds::text {
namespace {

using Json = nlohmann::json;

// The Split regexes of the Hugging Face tokenizers we recognise, with llama.cpp's name for each.
const std::pair<std::string_view, std::string_view> kKnownPreRegexes[] = {
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|)"
     R"(\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen2"},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}|)"
     R"( ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen35"},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|)"
     R"( ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "llama-bpe"},
};

StatusOr<Json> ReadJson(const std::string& path) {
  DS_ASSIGN_OR_RETURN(const std::string text, ReadFileText(path));
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgumentError(path + ": not valid JSON");
  if (!json.is_object()) return InvalidArgumentError(path + ": top level is not an object");
  return json;
}

const Json* Member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string StringMember(const Json& object, const char* key) {
  const Json* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

// Finds the regex of the first Split pre-tokenizer, searching inside Sequence.
std::string FindSplitRegex(const Json& pre) {
  if (StringMember(pre, "type") == "Split") {
    const Json* pattern = Member(pre, "pattern");
    return pattern != nullptr ? StringMember(*pattern, "Regex") : "";
  }
  const Json* children = Member(pre, "pretokenizers");
  if (children == nullptr || !children->is_array()) return "";
  for (const Json& child : *children) {
    std::string regex = FindSplitRegex(child);
    if (!regex.empty()) return regex;
  }
  return "";
}

StatusOr<std::string> DetectPre(const Json& root, const std::string& path) {
  const Json* pre = Member(root, "pre_tokenizer");
  if (pre == nullptr) return UnimplementedError(path + ": no pre_tokenizer");
  const std::string regex = FindSplitRegex(*pre);
  if (regex.empty()) {
    const Json* use_regex = Member(*pre, "use_regex");
    if (StringMember(*pre, "type") == "ByteLevel" && use_regex != nullptr &&
        use_regex->is_boolean() && use_regex->get<bool>()) {
      return std::string("gpt-2");
    }
    return UnimplementedError(path + ": unrecognised pre_tokenizer");
  }
  for (const auto& [known, name] : kKnownPreRegexes) {
    if (regex == known) return std::string(name);
  }
  return UnimplementedError(path + ": unrecognised pre-tokenizer regex " + regex);
}

// llama.cpp's convert_hf_to_gguf.py marks some non-special added tokens as control by their look.
bool LooksSpecial(std::string_view text) {
  auto wrapped = [&](std::string_view open, std::string_view close) {
    return text.size() >= open.size() + close.size() && text.starts_with(open) &&
           text.ends_with(close);
  };
  return text == "<pad>" || text == "<mask>" || text == "<2mass>" || text == "[@BOS@]" ||
         wrapped("<|", "|>") || wrapped("<｜", "｜>") || wrapped("<unused", ">");
}

std::string ReplaceSpmSpaces(std::string text) {
  static constexpr std::string_view kSpmSpace = "\xE2\x96\x81";
  for (size_t pos; (pos = text.find(kSpmSpace)) != std::string::npos;) {
    text.replace(pos, kSpmSpace.size(), " ");
  }
  return text;
}

Status ReadModel(const Json& model, const std::string& path, std::map<int64_t, std::string>* ids,
                 std::vector<std::string>* merges) {
  if (StringMember(model, "type") != "BPE") {
    return UnimplementedError(path + ": only BPE models are supported");
  }
  const Json* vocab = Member(model, "vocab");
  if (vocab == nullptr || !vocab->is_object())
    return InvalidArgumentError(path + ": no model.vocab");
  for (const auto& [text, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      return InvalidArgumentError(path + ": bad id for token '" + text + "'");
    }
    (*ids)[id.get<int64_t>()] = text;
  }
  const Json* merge_list = Member(model, "merges");
  if (merge_list == nullptr || !merge_list->is_array()) {
    return InvalidArgumentError(path + ": no model.merges");
  }
  for (const Json& merge : *merge_list) {
    if (merge.is_string()) {
      merges->push_back(merge.get<std::string>());
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      merges->push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    } else {
      return InvalidArgumentError(path + ": malformed merge");
    }
  }
  return OkStatus();
}

struct AddedToken {
  std::string content;
  bool special = false;
};

Status ReadAddedTokens(const Json& root, const std::string& path,
                       std::map<int64_t, AddedToken>* added) {
  const Json* list = Member(root, "added_tokens");
  if (list == nullptr) return OkStatus();
  if (!list->is_array()) return InvalidArgumentError(path + ": added_tokens is not an array");
  for (const Json& token : *list) {
    const Json* id = Member(token, "id");
    const Json* content = Member(token, "content");
    if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() < 0 || content == nullptr ||
        !content->is_string()) {
      return InvalidArgumentError(path + ": malformed added token");
    }
    const Json* special = Member(token, "special");
    (*added)[id->get<int64_t>()] = {content->get<std::string>(), special != nullptr &&
                                                                     special->is_boolean() &&
                                                                     special->get<bool>()};
  }
  return OkStatus();
}

// The content of a special-token entry of tokenizer_config.json: a string or {"content": ...}.
std::string TokenContent(const Json& config, const char* key) {
  const Json* entry = Member(config, key);
  if (entry == nullptr) return "";
  if (entry->is_string()) return entry->get<std::string>();
  return StringMember(*entry, "content");
}

Status ApplyConfig(const std::string& path, const std::map<int64_t, AddedToken>& added,
                   Vocab* vocab) {
  DS_ASSIGN_OR_RETURN(Json config, ReadJson(path));
  const Json* chat_template = Member(config, "chat_template");
  if (chat_template != nullptr && chat_template->is_string()) {
    vocab->chat_template = chat_template->get<std::string>();
  } else if (chat_template != nullptr && chat_template->is_array()) {
    // Named templates: keep "default", or the first one.
    for (const Json& named : *chat_template) {
      if (vocab->chat_template.empty() || StringMember(named, "name") == "default") {
        vocab->chat_template = StringMember(named, "template");
      }
    }
  }
  // Special ids come from added tokens first (as gguf-py's SpecialVocab), then the vocabulary.
  auto find_id = [&](const std::string& content) -> int32_t {
    if (content.empty()) return -1;
    for (const auto& [id, token] : added) {
      if (token.content == content) return static_cast<int32_t>(id);
    }
    for (size_t id = 0; id < vocab->tokens.size(); ++id) {
      if (vocab->tokens[id] == content) return static_cast<int32_t>(id);
    }
    return -1;
  };
  vocab->bos_id = find_id(TokenContent(config, "bos_token"));
  vocab->eos_id = find_id(TokenContent(config, "eos_token"));
  vocab->pad_id = find_id(TokenContent(config, "pad_token"));
  vocab->unk_id = find_id(TokenContent(config, "unk_token"));
  for (const auto& [key, flag] :
       {std::pair{"add_bos_token", &vocab->add_bos}, std::pair{"add_eos_token", &vocab->add_eos}}) {
    const Json* value = Member(config, key);
    if (value != nullptr && value->is_boolean()) *flag = value->get<bool>();
  }
  if (vocab->add_bos && vocab->bos_id < 0)
    return InvalidArgumentError(path + ": add_bos_token without bos_token");
  if (vocab->add_eos && vocab->eos_id < 0)
    return InvalidArgumentError(path + ": add_eos_token without eos_token");
  return OkStatus();
}

}  // namespace

StatusOr<Vocab> ImportHfTokenizer(const std::string& tokenizer_json_path,
                                  const std::string& tokenizer_config_path) {
  const std::string& path = tokenizer_json_path;
  DS_ASSIGN_OR_RETURN(Json root, ReadJson(path));
  const Json* model = Member(root, "model");
  if (model == nullptr) return InvalidArgumentError(path + ": no model");
  const Json* decoder = Member(root, "decoder");
  if (decoder == nullptr || StringMember(*decoder, "type") != "ByteLevel") {
    return UnimplementedError(path + ": only byte-level BPE (decoder ByteLevel) is supported");
  }

  Vocab vocab;
  vocab.model = kModelBpe;
  DS_ASSIGN_OR_RETURN(vocab.pre, DetectPre(root, path));
  const Json* normalizer = Member(root, "normalizer");
  if (normalizer != nullptr) {
    if (StringMember(*normalizer, "type") != "NFC") {
      return UnimplementedError(path + ": only the NFC normalizer is supported");
    }
    vocab.normalizer = "nfc";
  }

  std::map<int64_t, std::string> ids;
  std::map<int64_t, AddedToken> added;
  DS_RETURN_IF_ERROR(ReadModel(*model, path, &ids, &vocab.merges));
  DS_RETURN_IF_ERROR(ReadAddedTokens(root, path, &added));
  int64_t size = 0;
  if (!ids.empty()) size = ids.rbegin()->first + 1;
  if (!added.empty()) size = std::max(size, added.rbegin()->first + 1);
  if (size == 0 || size > (int64_t{1} << 31) - 1)
    return InvalidArgumentError(path + ": bad vocabulary size");

  for (int64_t id = 0; id < size; ++id) {
    const auto a = added.find(id);
    const auto t = ids.find(id);
    if (a != added.end()) {
      // Added tokens are stored as their raw text, like llama.cpp's converter does.
      const bool control = a->second.special || LooksSpecial(a->second.content);
      vocab.tokens.push_back(control ? a->second.content : ReplaceSpmSpaces(a->second.content));
      vocab.token_types.push_back(control ? TokenType::kControl : TokenType::kUserDefined);
    } else if (t != ids.end()) {
      vocab.tokens.push_back(t->second);
      vocab.token_types.push_back(TokenType::kNormal);
    } else {
      vocab.tokens.push_back("[PAD" + std::to_string(id) + "]");
      vocab.token_types.push_back(TokenType::kUnused);
    }
  }
  if (!tokenizer_config_path.empty()) {
    DS_RETURN_IF_ERROR(ApplyConfig(tokenizer_config_path, added, &vocab));
  }
  return vocab;
}

}  // namespace ds::text
