"""Build the optional C inner loops; without a compiler the pure-Python engine is used."""

import sys

from setuptools import Extension, setup

#: The trainer's merge loop and encode_texts run on POSIX threads where there are any (impl/_c/_fastbpe_threads.h,
#: impl/_c/_fastenc_batch.h), else on one.
THREADS = [] if sys.platform == "win32" else ["-pthread"]

setup(
    ext_modules=[
        Extension("bpeproof.impl._c._fastbpe", ["impl/_c/_fastbpe.c"],
                  depends=["impl/_c/_fastbpe_tables.h", "impl/_c/_fastbpe_part.h", "impl/_c/_fastbpe_heap.h",
                           "impl/_c/_fastbpe_threads.h", "impl/_c/_fastbpe_run.h"],
                  extra_compile_args=THREADS, extra_link_args=THREADS, optional=True),
        # _fastenc.c includes its parts (the tables, the merge loop, the word cache, the pre-tokenizers, the word
        # counter, the encoding methods, the batch encoder on threads, the Merger type): one translation unit,
        # rebuilt when any of them changes.
        Extension("bpeproof.impl._c._fastenc", ["impl/_c/_fastenc.c"],
                  depends=["impl/_c/_fastenc_table.h", "impl/_c/_fastenc_merge.h", "impl/_c/_fastenc_cache.h",
                           "impl/_c/_fastenc_scan.h", "impl/_c/_fastenc_count.h", "impl/_c/_fastenc_encode.h",
                           "impl/_c/_fastenc_batch.h", "impl/_c/_fastenc_merger.h", "impl/_c/_fastenc_shared.h",
                           "impl/_c/_fastbpe_tables.h"],
                  extra_compile_args=THREADS, extra_link_args=THREADS, optional=True),
        # The loaders' bulk readers (rank files, GGUF strings, sentencepiece pieces, merge lists, the cache's blobs):
        # _fastload.c includes its parts, one translation unit like _fastenc.
        Extension("bpeproof.impl._c._fastload", ["impl/_c/_fastload.c"],
                  depends=["impl/_c/_fastload_files.h", "impl/_c/_fastload_merges.h", "impl/_c/_fastload_blobs.h",
                           "impl/_c/_fastload_json.h"],
                  optional=True),
    ]
)
