"""Real architectures at their published sizes, built from code: no download, random weights, the meta device.

Each builder returns the model and its forward's keyword inputs (on the meta device: shapes
only, so a 7B model costs nothing to build). LLM configs also trace one decode step with a
KV cache (`decode`). All come from `transformers` (the `models` extra), its vision models
included (ResNet-50, ViT-B/16, ConvNeXt-T), so nothing needs torchvision's compiled ops.
`layers` overrides the number of identical blocks (tests trace one; the shares of a
model's cost are per op group, so fewer blocks only shift weight to the embedding and head).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

# Prompt length of the LLM forwards (and the KV cache length of their decode step), and the batch.
SEQUENCE = 512
BATCH = 1
IMAGE = 224


@dataclass(frozen=True)
class Architecture:
    """A named model and how to build it."""

    name: str
    # The config it is built from, for the record ("meta-llama/Llama-2-7b sizes").
    published: str
    build: Callable[[int | None], tuple[torch.nn.Module, dict[str, Any]]]
    # Whether one decode step with a KV cache is traced too (decoder LLMs).
    decode: bool = False


def _layers(default: int, override: int | None) -> int:
    return default if override is None else override


# Tokens of the MoE forward: its batched expert matmuls gather each token's two experts' weights
# (at 512 tokens that is 450 GiB for Mixtral's up-projection), so it runs a decode-sized batch.
MOE_TOKENS = 8


def _tokens(vocab: int, length: int = SEQUENCE) -> torch.Tensor:
    return torch.randint(0, vocab, (BATCH, length), device="meta")


def _causal(config_class: str, attention: str = "sdpa", **sizes: Any) -> Callable[[int | None], tuple[torch.nn.Module, dict[str, Any]]]:
    def build(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
        import transformers

        config = getattr(transformers, config_class)(**{**sizes, "num_hidden_layers": _layers(sizes["num_hidden_layers"], layers)})
        config._attn_implementation = attention
        if "num_local_experts" in sizes:
            # Experts as batched matmuls over each token's chosen experts: no data-dependent shapes
            # (the meta device has no values to route by) and no bfloat16-only grouped matmul.
            config._experts_implementation = "batched_mm"
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(config)
        length = MOE_TOKENS if "num_local_experts" in sizes else SEQUENCE
        return model.eval(), {"input_ids": _tokens(config.vocab_size, length), "use_cache": True}

    return build


def _gpt2(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    config = transformers.GPT2Config(n_embd=768, n_layer=_layers(12, layers), n_head=12, vocab_size=50257, n_positions=1024)
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(config)
    return model.eval(), {"input_ids": _tokens(config.vocab_size), "use_cache": True}


def _bert(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    config = transformers.BertConfig(hidden_size=768, num_hidden_layers=_layers(12, layers), num_attention_heads=12, intermediate_size=3072)
    with torch.device("meta"):
        model = transformers.BertModel(config)
    return model.eval(), {"input_ids": _tokens(config.vocab_size)}


def _t5(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    config = transformers.T5Config(
        d_model=768, d_ff=3072, num_layers=_layers(12, layers), num_decoder_layers=_layers(12, layers), num_heads=12, vocab_size=32128
    )
    with torch.device("meta"):
        model = transformers.T5ForConditionalGeneration(config)
    tokens = _tokens(config.vocab_size)
    return model.eval(), {"input_ids": tokens, "decoder_input_ids": tokens[:, : SEQUENCE // 4]}


def _pixels() -> torch.Tensor:
    return torch.empty(BATCH * 8, 3, IMAGE, IMAGE, device="meta")


def _vit(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    config = transformers.ViTConfig(
        hidden_size=768, num_hidden_layers=_layers(12, layers), num_attention_heads=12, intermediate_size=3072, patch_size=16, image_size=IMAGE
    )
    config._attn_implementation = "sdpa"
    with torch.device("meta"):
        model = transformers.ViTModel(config)
    return model.eval(), {"pixel_values": _pixels()}


def _convnext(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    depths = [3, 3, 9, 3] if layers is None else [layers] * 4
    config = transformers.ConvNextConfig(hidden_sizes=[96, 192, 384, 768], depths=depths)
    with torch.device("meta"):
        model = transformers.ConvNextModel(config)
    return model.eval(), {"pixel_values": _pixels()}


def _resnet(layers: int | None) -> tuple[torch.nn.Module, dict[str, Any]]:
    import transformers

    depths = [3, 4, 6, 3] if layers is None else [layers] * 4
    config = transformers.ResNetConfig(layer_type="bottleneck", hidden_sizes=[256, 512, 1024, 2048], depths=depths, embedding_size=64)
    with torch.device("meta"):
        model = transformers.ResNetModel(config)
    return model.eval(), {"pixel_values": _pixels()}


ARCHITECTURES: dict[str, Architecture] = {
    architecture.name: architecture
    for architecture in (
        Architecture(
            "llama2_7b",
            "Llama-2-7B sizes (hidden 4096, MLP 11008, 32 heads, 32 layers, vocab 32000)",
            _causal(
                "LlamaConfig",
                hidden_size=4096,
                intermediate_size=11008,
                num_attention_heads=32,
                num_key_value_heads=32,
                num_hidden_layers=32,
                vocab_size=32000,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "mistral_7b",
            "Mistral-7B sizes (hidden 4096, MLP 14336, 32 heads, 8 KV heads, 32 layers, vocab 32000)",
            _causal(
                "MistralConfig",
                hidden_size=4096,
                intermediate_size=14336,
                num_attention_heads=32,
                num_key_value_heads=8,
                num_hidden_layers=32,
                vocab_size=32000,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "qwen2_7b",
            "Qwen2-7B sizes (hidden 3584, MLP 18944, 28 heads, 4 KV heads, 28 layers, vocab 152064)",
            _causal(
                "Qwen2Config",
                hidden_size=3584,
                intermediate_size=18944,
                num_attention_heads=28,
                num_key_value_heads=4,
                num_hidden_layers=28,
                vocab_size=152064,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "mixtral_8x7b",
            "Mixtral-8x7B sizes (hidden 4096, expert MLP 14336, 8 experts, top-2, 32 heads, 8 KV heads, 32 layers), 8 tokens",
            _causal(
                "MixtralConfig",
                hidden_size=4096,
                intermediate_size=14336,
                num_attention_heads=32,
                num_key_value_heads=8,
                num_hidden_layers=32,
                num_local_experts=8,
                num_experts_per_tok=2,
                vocab_size=32000,
                max_position_embeddings=4096,
            ),
        ),
        Architecture(
            "llama3_8b",
            "Llama-3-8B sizes (hidden 4096, MLP 14336, 32 heads, 8 KV heads, 32 layers, vocab 128256)",
            _causal(
                "LlamaConfig",
                hidden_size=4096,
                intermediate_size=14336,
                num_attention_heads=32,
                num_key_value_heads=8,
                num_hidden_layers=32,
                vocab_size=128256,
                max_position_embeddings=8192,
            ),
            decode=True,
        ),
        Architecture(
            "gemma_2b",
            "Gemma-2B sizes (hidden 2048, MLP 16384, 8 heads, 1 KV head, head dim 256, 18 layers, vocab 256000)",
            _causal(
                "GemmaConfig",
                hidden_size=2048,
                intermediate_size=16384,
                num_attention_heads=8,
                num_key_value_heads=1,
                head_dim=256,
                num_hidden_layers=18,
                vocab_size=256000,
                max_position_embeddings=8192,
            ),
            decode=True,
        ),
        Architecture(
            "phi3_mini",
            "Phi-3-mini sizes (hidden 3072, MLP 8192, 32 heads, 32 layers, vocab 32064)",
            _causal(
                "Phi3Config",
                hidden_size=3072,
                intermediate_size=8192,
                num_attention_heads=32,
                num_key_value_heads=32,
                num_hidden_layers=32,
                vocab_size=32064,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "qwen2_0_5b",
            "Qwen2-0.5B sizes (hidden 896, MLP 4864, 14 heads, 2 KV heads, 24 layers, vocab 151936)",
            _causal(
                "Qwen2Config",
                hidden_size=896,
                intermediate_size=4864,
                num_attention_heads=14,
                num_key_value_heads=2,
                num_hidden_layers=24,
                vocab_size=151936,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "qwen3_8b",
            "Qwen3-8B sizes (hidden 4096, MLP 12288, 32 heads, 8 KV heads, head dim 128, QK-norm, 36 layers, vocab 151936)",
            _causal(
                "Qwen3Config",
                hidden_size=4096,
                intermediate_size=12288,
                num_attention_heads=32,
                num_key_value_heads=8,
                head_dim=128,
                num_hidden_layers=36,
                vocab_size=151936,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "olmo2_7b",
            "OLMo-2-7B sizes (hidden 4096, MLP 11008, 32 heads, QK-norm over the projections, norms after each sublayer, 32 layers, vocab 100352)",
            _causal(
                "Olmo2Config",
                hidden_size=4096,
                intermediate_size=11008,
                num_attention_heads=32,
                num_key_value_heads=32,
                num_hidden_layers=32,
                vocab_size=100352,
                max_position_embeddings=4096,
            ),
            decode=True,
        ),
        Architecture(
            "gemma2_2b",
            "Gemma-2-2B sizes (hidden 2304, MLP 9216, 8 heads, 4 KV heads, head dim 256, logit soft-capping, 26 layers, vocab 256000; eager attention)",
            _causal(
                "Gemma2Config",
                attention="eager",
                hidden_size=2304,
                intermediate_size=9216,
                num_attention_heads=8,
                num_key_value_heads=4,
                head_dim=256,
                num_hidden_layers=26,
                vocab_size=256000,
                max_position_embeddings=8192,
            ),
            decode=True,
        ),
        Architecture("gpt2", "GPT-2 (124M) sizes (hidden 768, 12 heads, 12 layers, vocab 50257)", _gpt2, decode=True),
        Architecture("bert_base", "BERT-base sizes (hidden 768, MLP 3072, 12 heads, 12 layers)", _bert),
        Architecture("t5_base", "T5-base sizes (d_model 768, d_ff 3072, 12 heads, 12 + 12 layers)", _t5),
        Architecture("vit_b16", "ViT-B/16 sizes (224 px, patch 16, hidden 768, MLP 3072, 12 heads, 12 layers), batch 8", _vit),
        Architecture("convnext_tiny", "ConvNeXt-T sizes (widths 96-768, depths 3-3-9-3, 224 px), batch 8", _convnext),
        Architecture("resnet50", "ResNet-50 sizes (bottleneck, widths 256-2048, depths 3-4-6-3, 224 px), batch 8", _resnet),
    )
}
