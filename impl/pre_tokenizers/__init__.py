"""impl/pre_tokenizers"""
