"""impl/_c"""
