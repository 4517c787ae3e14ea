"""Merge models: the BPE semantics of each tokenizer library, each as a pair table for the one merge loop.

A model turns one pre-token (its UTF-8 bytes) into ids, exactly as a library does, and knows the bytes of every
id (for decoding).  What every model offers a ``Tokenizer`` is the ``MergeModel`` protocol of ``merge_model``,
which also lists the semantics (``SEMANTICS``); ``semantics`` names what a model runs, one module each:

``sequential``  the article's enc_R (def-bpe): rules applied in list order (``sequential.SequentialModel``, the
                project's own files and trained tokenizers);
``tiktoken``    tiktoken's encoder for any rank file, proper or not: the whole pre-token if it is a token, else
                repeatedly join the adjacent two parts whose *joined bytes* have the lowest rank, leftmost first
                (``tiktoken.TiktokenModel``; ``bpeproof.spec.variants.enc_tiktoken`` is its definition);
``hf-bpe``      Hugging Face ``tokenizers``' BPE model: pairs of the merge list ranked by their line, the
                joined string's vocabulary id as result, ``ignore_merges`` (whole word first), unknown bytes
                dropped or ``unk`` — on the bytes of a byte-level vocabulary (``hugging_face.HuggingFaceModel``),
                or on the words' strings with a word prefix, an end-of-word suffix, byte fallback, any vocabulary
                (``hugging_face.HuggingFaceTextModel``); ``bpeproof.spec.variants.enc_pair_rank`` and
                ``enc_hf_bpe`` define them.
``sentencepiece-bpe``  sentencepiece's BPE model on a whole text: its normalization, then characters joined by
                the score of the piece they spell, highest first, unknown characters as byte pieces or ``unk``
                (``sentencepiece.SentencePieceModel``; it runs in Python).
``llama.cpp``   llama.cpp's BPE on the tokens of a GGUF file: the adjacent pair listed first joined first, whatever
                the joined bytes are (``llama_cpp.LlamaCppModel`` on bytes, ``llama_cpp.LlamaCppTextModel`` on the
                characters of a vocabulary spelt as text, ``gemma4``; the rest of llama.cpp's tokenizer, its
                special-token partition and pre-tokenizer, is the pipeline ``bpeproof.impl.pipelines.llama_cpp``).
``llama.cpp-spm``  llama.cpp's SPM tokenizer: the two symbols whose joined text is the highest-scoring token
                joined first, any other symbol as ``<0xXX>`` byte tokens (``llama_cpp_spm.LlamaCppSpmModel``; the
                space prefix and special tokens are the pipeline ``bpeproof.impl.pipelines.llama_cpp_spm``).

Each model runs in C when the optional extension is built (``c_merger``) and in Python otherwise, with the
same ids; the tests compare both with the definitions in ``spec/variants.py`` and with the libraries.  Each also
reports one word's merges, under its own semantics and under the article's definitions on the merge list
recovered from its file (``merge_steps``, ``article_steps``: ``steps``), for ``explain`` and ``trace --vocab``.

Beside the models, ``variants`` runs each merge variant of ``spec/variants.py`` (rule-rank, bytes-rank, whole-word
first, longest-first) over any file's tables, by name: the one definition the checker names a port's merging by
and the audit compares a file's library with.
"""
