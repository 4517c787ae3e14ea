"""Planted implementations for testing the checker (``bpeproof.proofs_tests.checker.functions``).

Each entry names an implementation as ``module:function`` and the article id the
checker must report for it.  The buggy ones reproduce mistakes that real BPE code
makes; the correct ones are written differently from ``spec`` and must never be
reported.

========================================  ==========================================================
implementation                            what goes wrong (article id reported)
========================================  ==========================================================
encoders:enc_right_to_left                each M_r scans from the right (def-bpe)
encoders:enc_rightmost_first              rank order, rightmost occurrence first (def-bpe)
encoders:enc_overlap_from_end             runs a a a paired from the end (def-bpe)
encoders:enc_bytes_rank                   ranks by joined bytes, tiktoken style (def-bpe)
encoders:enc_contiguous_ids               writes 256 + j instead of the rule's id (thm-bpe-roundtrip)
encoders:enc_chunks_64                    encodes 64-byte chunks separately (def-bpe)
encoders:enc_chunks_1024                  encodes 1024-byte chunks separately (def-bpe)
encoders:enc_cache_by_length              cache keyed by lengths (def-bpe or thm-bpe-roundtrip)
encoders:enc_cache_by_first_byte          cache keyed by the first byte (def-bpe or thm-bpe-roundtrip)
encoders:enc_cache_without_rules          cache keyed by the data alone (def-bpe or thm-bpe-roundtrip)
encoders:enc_drops_equal_parts            ignores rules (a, a ↦ c) (def-bpe)
encoders:enc_by_frequency                 most frequent pair's rule first (def-bpe)
encoders:enc_duplicate_pair_last          a repeated pair takes the last rule (def-bpe)
encoders:enc_cache_by_rule_set            cache keyed by the set of rules (def-bpe or thm-bpe-roundtrip)
encoders:enc_splits_on_space              encodes the pieces between spaces separately (def-bpe)
decoders:dec_each_token_as_text           each token decoded as text alone (def-alphabet-vocab)
decoders:dec_through_text                 bytes → str → bytes with errors replaced (def-alphabet-vocab)
decoders:dec_contiguous_ids               token table indexed by 256 + j (def-alphabet-vocab)
decoders:dec_cache_without_rules          token bytes cached by id across rule lists (def-alphabet-vocab)
trainers:train_across_words               counts pairs across words (def-bpe step 2; with m = None it never
                                          stops: prop-bpe-training-termination)
trainers:train_ties_first_seen            ties to the pair seen first (def-bpe step 4)
trainers:train_ties_largest               ties to the largest pair (def-bpe step 4)
trainers:train_ties_by_bytes              ties by the pair's bytes, not its ids (def-bpe step 4)
trainers:train_non_overlapping            counts non-overlapping occurrences (def-bpe step 2)
trainers:train_stops_at_one               stops when the best count is 1 (def-bpe step 3)
trainers:train_distinct_words             deduplicates words (def-bpe step 2)
trainers:train_stale_counts               incremental counts, neighbours not updated (def-bpe step 2)
trainers:train_never_stops                loops forever with num_merges = None (prop-bpe-training-termination)
trainers:train_pads_to_bound              pads to num_merges with (0, 0) rules (prop-bpe-training-termination)
========================================  ==========================================================
"""

from __future__ import annotations

_P = "bpeproof.proofs_tests.planted."

#: (function kind, target, the article id the checker must report)
BUGGY: list[tuple[str, str, str]] = [
    ("enc", _P + "encoders:enc_right_to_left", "def-bpe"),
    ("enc", _P + "encoders:enc_rightmost_first", "def-bpe"),
    ("enc", _P + "encoders:enc_overlap_from_end", "def-bpe"),
    ("enc", _P + "encoders:enc_bytes_rank", "def-bpe"),
    ("enc", _P + "encoders:enc_contiguous_ids", "thm-bpe-roundtrip"),
    ("enc", _P + "encoders:enc_chunks_64", "def-bpe"),
    ("enc", _P + "encoders:enc_chunks_1024", "def-bpe"),
    ("enc", _P + "encoders:enc_cache_by_length", "def-bpe|thm-bpe-roundtrip|prop-bpe-length-monotone"),
    ("enc", _P + "encoders:enc_cache_by_first_byte", "def-bpe|thm-bpe-roundtrip|prop-bpe-length-monotone"),
    ("enc", _P + "encoders:enc_cache_without_rules", "def-bpe|thm-bpe-roundtrip|prop-bpe-length-monotone"),
    ("enc", _P + "encoders:enc_drops_equal_parts", "def-bpe"),
    ("enc", _P + "encoders:enc_by_frequency", "def-bpe"),
    ("enc", _P + "encoders:enc_duplicate_pair_last", "def-bpe"),
    ("enc", _P + "encoders:enc_cache_by_rule_set", "def-bpe|thm-bpe-roundtrip|prop-bpe-length-monotone"),
    ("enc", _P + "encoders:enc_splits_on_space", "def-bpe"),
    ("dec", _P + "decoders:dec_each_token_as_text", "def-alphabet-vocab"),
    ("dec", _P + "decoders:dec_through_text", "def-alphabet-vocab"),
    ("dec", _P + "decoders:dec_contiguous_ids", "def-alphabet-vocab"),
    ("dec", _P + "decoders:dec_cache_without_rules", "def-alphabet-vocab"),
    ("train", _P + "trainers:train_across_words", "def-bpe|prop-bpe-training-termination"),
    ("train", _P + "trainers:train_ties_first_seen", "def-bpe"),
    ("train", _P + "trainers:train_ties_largest", "def-bpe"),
    ("train", _P + "trainers:train_ties_by_bytes", "def-bpe"),
    ("train", _P + "trainers:train_non_overlapping", "def-bpe"),
    ("train", _P + "trainers:train_stops_at_one", "def-bpe"),
    ("train", _P + "trainers:train_distinct_words", "def-bpe"),
    ("train", _P + "trainers:train_stale_counts", "def-bpe"),
    ("train", _P + "trainers:train_never_stops", "prop-bpe-training-termination"),
    ("train", _P + "trainers:train_pads_to_bound", "prop-bpe-training-termination"),
]

#: (function kind, target): correct implementations, never to be reported.
CORRECT: list[tuple[str, str]] = [
    ("enc", _P + "correct:enc_rank_order"),
    ("enc", _P + "correct:enc_fixpoint"),
    ("enc", "bpeproof.impl.encoder:enc"),
    ("enc", "spec:enc"),
    ("dec", _P + "correct:dec_table"),
    ("dec", "bpeproof.impl.encoder:dec"),
    ("train", _P + "correct:train_word_counts"),
    ("train", "bpeproof.impl.trainer:train"),
    ("train", "spec:train"),
]
