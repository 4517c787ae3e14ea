"""The checker for anyone's BPE: ``functions`` (enc, dec, train) and ``tokenizers`` (text → ids ports), with the
sandbox their code runs in and the strategies that generate their inputs."""
