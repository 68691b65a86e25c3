"""t_tensor: a small PyTorch-like tensor library (placeholder while the core is built)."""
