"""impl/io"""
