"""The zoo check: real torchvision, timm and transformers models (see run.py)."""
