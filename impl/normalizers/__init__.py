"""impl/normalizers"""
