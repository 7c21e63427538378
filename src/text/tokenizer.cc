#include "text/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "text/nfc.h"
#include "text/unicode.h"

namespace ds::text {
namespace {

// llama.cpp's llama_token_attr bits: a token may carry several (control + unused).
constexpr uint32_t kAttrUnknown = 1u << 0;
constexpr uint32_t kAttrUnused = 1u << 1;
constexpr uint32_t kAttrNormal = 1u << 2;
constexpr uint32_t kAttrControl = 1u << 3;
constexpr uint32_t kAttrUserDefined = 1u << 4;
constexpr uint32_t kAttrByte = 1u << 5;

constexpr char kSpmSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

uint32_t AttrFromType(TokenType type) {
  switch (type) {
    case TokenType::kNormal:
      return kAttrNormal;
    case TokenType::kUnknown:
      return kAttrUnknown;
    case TokenType::kControl:
      return kAttrControl;
    case TokenType::kUserDefined:
      return kAttrUserDefined;
    case TokenType::kUnused:
      return kAttrUnused;
    case TokenType::kByte:
      return kAttrByte;
    case TokenType::kUndefined:
      return 0;
  }
  return 0;
}

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

bool TextIn(std::string_view text, std::span<const std::string_view> list) {
  return std::find(list.begin(), list.end(), text) != list.end();
}

// Token texts llama.cpp's loader recognises (llama-vocab.cpp, load()).
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>",        "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>",   "<EOT>",      "_<EOT>",  "[EOT]",         "<｜end▁of▁sentence｜>",
    "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPreTexts[] = {"<|fim_prefix|>",  "<fim-prefix>", "<fim_prefix>",
                                             "<｜fim▁begin｜>", "<PRE>",        "▁<PRE>",
                                             "<|code_prefix|>", "<|prefix|>"};
constexpr std::string_view kFimSufTexts[] = {"<|fim_suffix|>",  "<fim-suffix>", "<fim_suffix>",
                                             "<｜fim▁hole｜>",  "<SUF>",        "▁<SUF>",
                                             "<|code_suffix|>", "<|suffix|>"};
constexpr std::string_view kFimMidTexts[] = {"<|fim_middle|>",  "<fim-middle>", "<fim_middle>",
                                             "<｜fim▁end｜>",   "<MID>",        "▁<MID>",
                                             "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
                                             "[PAD]"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                             "<REPO>", "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
// llama.cpp also lists "</s>" (for PaddleOCR); it is left out because byte-level vocabularies
// such as Qwen's hold "</s>" as ordinary text (HTML), and SentencePiece vocabularies that end
// with "</s>" name it as eos anyway.
constexpr std::string_view kEogTexts[] = {"<|eot_id|>",
                                          "<|im_end|>",
                                          "<|end|>",
                                          "<|return|>",
                                          "<|call|>",
                                          "<|flush|>",
                                          "<|calls|>",
                                          "<end_of_turn>",
                                          "<|endoftext|>",
                                          "<|eom_id|>",
                                          "<EOT>",
                                          "_<EOT>",
                                          "[EOT]",
                                          "[EOS]",
                                          "<|end_of_text|>",
                                          "<end_of_utterance>",
                                          "<eos>",
                                          "<turn|>",
                                          "<|tool_response>",
                                          "<｜end▁of▁sentence｜>",
                                          "[e~["};

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromVocab(Vocab vocab) {
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer(std::move(vocab)));
  DS_RETURN_IF_ERROR(tokenizer->Init());
  return tokenizer;
}

Status Tokenizer::Init() {
  Vocab& v = vocab_;
  if (v.model != kModelSpm && v.model != kModelBpe) {
    return InvalidArgumentError("unsupported tokenizer model '" + v.model + "'");
  }
  is_spm_ = v.model == kModelSpm;
  const int32_t n = v.num_tokens();
  if (n == 0) return InvalidArgumentError("the vocabulary is empty");
  if (v.token_types.size() != v.tokens.size()) {
    return InvalidArgumentError("token_types and tokens differ in size");
  }
  if (!v.scores.empty() && v.scores.size() != v.tokens.size()) {
    return InvalidArgumentError("scores and tokens differ in size");
  }
  for (int32_t id : {v.bos_id, v.eos_id, v.eot_id, v.pad_id, v.unk_id}) {
    if (id < -1 || id >= n) return InvalidArgumentError("special token id out of range");
  }
  if (v.add_bos && v.bos_id < 0) return InvalidArgumentError("add_bos is set without a bos id");
  if (v.add_eos && v.eos_id < 0) return InvalidArgumentError("add_eos is set without an eos id");
  if (!v.normalizer.empty() && v.normalizer != "nfc") {
    return InvalidArgumentError("unsupported normalizer '" + v.normalizer + "'");
  }

  attrs_.resize(n);
  for (int32_t id = 0; id < n; ++id) {
    // llama.cpp renames empty tokens so that every token has a distinct, non-empty text.
    if (v.tokens[id].empty()) v.tokens[id] = "[EMPTY_" + std::to_string(id) + "]";
    if (!lookup_.Insert(v.tokens[id], id)) {
      return InvalidArgumentError("duplicate token in vocabulary: '" + v.tokens[id] + "' has ids " +
                                  std::to_string(lookup_.Find(v.tokens[id])) + " and " +
                                  std::to_string(id));
    }
    attrs_[id] = AttrFromType(v.token_types[id]);
  }
  scores_ = v.scores.empty() ? std::vector<float>(n, 0.0f) : v.scores;

  if (is_spm_) {
    byte_tokens_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      int32_t id = lookup_.Find(hex);
      if (id < 0) id = lookup_.Find(std::string(1, static_cast<char>(b)));
      byte_tokens_[b] = id >= 0 ? id : v.unk_id;
    }
  } else {
    DS_ASSIGN_OR_RETURN(pre_, PreTokenizer::Create(v.pre));
    merger_ = std::make_unique<BpeMerger>(v.merges);
  }

  FixAttributes();
  for (int32_t id = 0; id < n; ++id) {
    if (attrs_[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) special_ids_.push_back(id);
  }
  std::stable_sort(special_ids_.begin(), special_ids_.end(),
                   [&](int32_t a, int32_t b) { return v.tokens[a].size() > v.tokens[b].size(); });
  pieces_.resize(n);
  for (int32_t id = 0; id < n; ++id) {
    pieces_[id] = ComputePiece(id);
    max_piece_bytes_ = std::max(max_piece_bytes_, pieces_[id].size());
  }
  return OkStatus();
}

// Mirrors the fixes llama.cpp applies after loading: tokens recognised by their text as end of
// turn or fill-in-the-middle markers become control tokens, control tokens named "unused" are
// unused, and the end-of-generation set is built from text, eos and eot.
void Tokenizer::FixAttributes() {
  Vocab& v = vocab_;
  int32_t eom = -1, fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1,
          fim_sep = -1;
  auto detect = [&](int32_t id, int32_t* slot, std::span<const std::string_view> texts) {
    if (*slot >= 0 || !TextIn(v.tokens[id], texts)) return;
    *slot = id;
    attrs_[id] |= kAttrControl;
  };
  for (int32_t id = 0; id < v.num_tokens(); ++id) {
    detect(id, &v.eot_id, kEotTexts);
    detect(id, &eom, kEomTexts);
    detect(id, &fim_pre, kFimPreTexts);
    detect(id, &fim_suf, kFimSufTexts);
    detect(id, &fim_mid, kFimMidTexts);
    detect(id, &fim_pad, kFimPadTexts);
    detect(id, &fim_rep, kFimRepTexts);
    detect(id, &fim_sep, kFimSepTexts);
  }
  for (int32_t id = 0; id < v.num_tokens(); ++id) {
    if ((attrs_[id] & kAttrControl) && v.tokens[id].find("unused") != std::string::npos) {
      attrs_[id] |= kAttrUnused;
    }
    if (TextIn(v.tokens[id], kEogTexts)) {
      eog_ids_.push_back(id);
      attrs_[id] |= kAttrControl;
    }
  }
  for (int32_t id : {fim_pad, fim_rep, fim_sep, v.eos_id, v.eot_id, eom}) {
    if (id >= 0) eog_ids_.push_back(id);
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
}

std::vector<Tokenizer::Fragment> Tokenizer::Partition(std::string_view text,
                                                      bool parse_special) const {
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({-1, 0, text.size()});
  std::vector<Fragment> next;
  for (int32_t id : special_ids_) {
    // User-defined tokens are split out even without parse_special, like Hugging Face does.
    if (!parse_special && (attrs_[id] & (kAttrControl | kAttrUnknown))) continue;
    const std::string& token = vocab_.tokens[id];
    if (text.find(token) == std::string_view::npos) continue;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view raw = text.substr(f.begin, f.length);
      size_t pos = 0;
      for (size_t hit; (hit = raw.find(token, pos)) != std::string_view::npos;) {
        if (hit > pos) next.push_back({-1, f.begin + pos, hit - pos});
        next.push_back({id, f.begin + hit, token.size()});
        pos = hit + token.size();
      }
      if (pos < raw.size()) next.push_back({-1, f.begin + pos, raw.size() - pos});
    }
    fragments.swap(next);
  }
  return fragments;
}

std::string Tokenizer::RawFragment(std::string_view text, const Fragment& fragment) const {
  const std::string_view raw = text.substr(fragment.begin, fragment.length);
  return vocab_.normalizer == "nfc" ? NormalizeNfc(raw) : std::string(raw);
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  const std::vector<Fragment> fragments = Partition(text, parse_special);
  if (is_spm_) {
    EncodeSpm(text, fragments, add_special, &out);
    return out;
  }
  if (add_special && vocab_.add_bos) out.push_back(vocab_.bos_id);
  EncodeBpe(text, fragments, &out);
  if (add_special && vocab_.add_eos) out.push_back(vocab_.eos_id);
  return out;
}

void Tokenizer::EncodeSpm(std::string_view text, const std::vector<Fragment>& fragments,
                          bool add_special, std::vector<int32_t>* out) const {
  if (add_special && vocab_.add_bos) out->push_back(vocab_.bos_id);
  // The leading space goes at the start of the text and after every special token.
  bool after_special = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      after_special = true;
      continue;
    }
    std::string raw = RawFragment(text, f);
    if (vocab_.add_space_prefix && after_special) raw.insert(raw.begin(), ' ');
    SpmEncode(ReplaceAll(raw, " ", kSpmSpace), lookup_, scores_, byte_tokens_, out);
    after_special = false;
  }
  if (add_special && vocab_.add_eos) out->push_back(vocab_.eos_id);
}

void Tokenizer::EncodeBpe(std::string_view text, const std::vector<Fragment>& fragments,
                          std::vector<int32_t>* out) const {
  std::string byte_level;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      continue;
    }
    for (const std::string& word : pre_->Split(RawFragment(text, f))) {
      byte_level.clear();
      for (char c : word) byte_level += ByteToByteLevel(static_cast<uint8_t>(c));
      merger_->EncodeWord(byte_level, lookup_, pre_->ignore_merges(), out);
    }
  }
}

std::string Tokenizer::ComputePiece(int32_t id) const {
  const std::string& text = vocab_.tokens[id];
  const uint32_t attr = attrs_[id];
  if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return text;
  if (attr & kAttrNormal) {
    if (is_spm_) return ReplaceAll(text, kSpmSpace, " ");
    std::string bytes;
    size_t offset = 0;
    while (offset < text.size()) {
      const size_t start = offset;
      const int byte = ByteLevelToByte(DecodeUtf8Lenient(text, &offset));
      // A character outside the byte-level alphabet is passed through unchanged.
      if (byte >= 0) {
        bytes.push_back(static_cast<char>(byte));
      } else {
        bytes.append(text, start, offset - start);
      }
    }
    return bytes;
  }
  if ((attr & kAttrByte) && text.size() == 6 && text.compare(0, 3, "<0x") == 0) {
    char* end = nullptr;
    const std::string hex = text.substr(3, 2);
    const long byte = std::strtol(hex.c_str(), &end, 16);
    if (end == hex.c_str() + 2) return std::string(1, static_cast<char>(byte));
  }
  return "";
}

std::string Tokenizer::TokenToPiece(int32_t id, bool render_special) const {
  if (id < 0 || id >= num_tokens()) return "";
  if (!render_special && (attrs_[id] & (kAttrUnknown | kAttrControl))) return "";
  return pieces_[id];
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) out += TokenToPiece(id, render_special);
  return out;
}

bool Tokenizer::IsEog(int32_t id) const {
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

bool Tokenizer::IsControl(int32_t id) const {
  return id >= 0 && id < num_tokens() && (attrs_[id] & kAttrControl) != 0;
}

}  // namespace ds::text
