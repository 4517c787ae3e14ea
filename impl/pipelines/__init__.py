"""impl/pipelines"""
