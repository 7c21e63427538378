// Tokenizer: text <-> token ids for a Vocab, matching llama.cpp's llama_tokenize and
// llama_token_to_piece id for id. Two models: SentencePiece-style ("llama": score-based merging,
// spaces as U+2581, optional leading space, <0xXX> byte fallback) and byte-level BPE ("gpt2":
// regex pre-tokenizer, merge ranks).
// Special tokens (control, user-defined, unknown) are found in the text before the model runs:
// user-defined ones always, control and unknown ones only with parse_special; longer tokens
// first. Token attributes get llama.cpp's load-time fixes (end-of-turn and fill-in-the-middle
// tokens recognised by their text become control tokens) and EOG ids are derived the same way.
// Thread safety: immutable after FromVocab; every method may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "text/merge.h"
#include "text/pretokenizer.h"
#include "text/token_lookup.h"
#include "text/vocab.h"

namespace ds::text {

class Tokenizer {
 public:
  // Validates the vocab (model, array sizes, special ids in range, duplicate tokens, supported
  // pre-tokenizer) and builds the lookup tables.
  static StatusOr<std::unique_ptr<Tokenizer>> FromVocab(Vocab vocab);

  // add_special: prepend bos / append eos as the vocab's add_bos / add_eos say.
  // parse_special: match control and unknown tokens written in the text.
  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes of one token, as llama_token_to_piece gives them: control and unknown tokens are
  // empty unless `render_special`; user-defined tokens are their text. Ids outside the vocabulary
  // give an empty string. The bytes need not be valid UTF-8 on their own.
  std::string TokenToPiece(int32_t id, bool render_special = false) const;
  // Concatenated pieces (no space stripping or clean-up; may end inside a UTF-8 sequence).
  std::string Decode(std::span<const int32_t> ids, bool render_special = false) const;

  // A count that no encoding of `text` goes below, found without encoding it: no token covers
  // more bytes of text than the longest piece (or than a character that falls back to <unk>).
  // Lets a caller refuse a prompt far over a limit before paying for its tokenisation.
  int64_t MinTokens(std::string_view text) const {
    return static_cast<int64_t>(text.size() / max_piece_bytes_);
  }

  const Vocab& vocab() const { return vocab_; }
  int32_t num_tokens() const { return vocab_.num_tokens(); }
  bool IsEog(int32_t id) const;
  bool IsControl(int32_t id) const;
  // Sorted ascending.
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }
  // The id of the token spelled exactly `text` (stored form), or -1.
  int32_t FindToken(std::string_view text) const { return lookup_.Find(text); }

 private:
  struct Fragment {
    int32_t token;  // >= 0: a special token; -1: raw text [begin, begin + length)
    size_t begin;
    size_t length;
  };

  explicit Tokenizer(Vocab vocab);
  Status Init();
  void FixAttributes();
  std::vector<Fragment> Partition(std::string_view text, bool parse_special) const;
  void EncodeSpm(std::string_view text, const std::vector<Fragment>& fragments, bool add_special,
                 std::vector<int32_t>* out) const;
  void EncodeBpe(std::string_view text, const std::vector<Fragment>& fragments,
                 std::vector<int32_t>* out) const;
  std::string RawFragment(std::string_view text, const Fragment& fragment) const;
  std::string ComputePiece(int32_t id) const;

  Vocab vocab_;
  bool is_spm_ = false;
  std::vector<uint32_t> attrs_;       // id -> attribute bits (see tokenizer.cc)
  std::vector<float> scores_;         // id -> score (0 when the vocab has none)
  std::vector<int32_t> byte_tokens_;  // byte -> <0xXX> token (SPM), or -1
  std::vector<int32_t> special_ids_;  // matched in the text; longest text first
  std::vector<int32_t> eog_ids_;
  std::vector<std::string> pieces_;  // id -> piece with render_special
  size_t max_piece_bytes_ = 4;  // the longest piece, at least one UTF-8 character
  TokenLookup lookup_;
  std::unique_ptr<PreTokenizer> pre_;  // BPE only
  std::unique_ptr<BpeMerger> merger_;  // BPE only
};

}  // namespace ds::text
