"""A tiny tokenizer (bytes + the Qwen3 chat template shipped in trl) and a tiny random causal LM,
built in memory: nothing is downloaded. `scripted_pair` makes the model answer one given tool call,
`scripted_text_pair` any given text; `save_pair` writes a pair as a model folder a server loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKERS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def tiny_tokenizer() -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tk = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tk.decoder = decoders.ByteLevel()
    tk.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tk.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKERS])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left")
    tok.chat_template = qwen3_chat_template
    return tok


def tiny_model(vocab_size: int, seed: int = 0, tie_word_embeddings: bool = True) -> Any:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        max_position_embeddings=65536,
        tie_word_embeddings=tie_word_embeddings,
    )
    return Qwen3ForCausalLM(config)


def tiny_pair(seed: int = 0) -> Tuple[Any, Any]:
    tok = tiny_tokenizer()
    return tok, tiny_model(len(tok), seed)


def scripted_pair(call: Dict[str, Any], seed: int = 0) -> Tuple[Any, Any]:
    """The tiny tokenizer with the whole tool call `call` ({"name", "arguments"}) as one token, and a
    model that answers every prompt with `<tool_call>` CALL `</tool_call>` `<|im_end|>`."""
    return scripted_text_pair(["<tool_call>", json.dumps(call), "</tool_call>"], seed)


def scripted_text_pair(pieces: Sequence[str], seed: int = 0) -> Tuple[Any, Any]:
    """The tiny tokenizer with each of `pieces` that is not one of its tokens added as one, and a model
    that answers every prompt with the pieces in order, then `<|im_end|>` (so the answer is their
    concatenation: text, a tool call, or markup a server cannot parse).

    The model is a bigram chain: with the blocks' output projections zeroed, the residual stream
    carries only the current token's embedding, so the next-token logits are lm_head(norm(embedding)).
    Each token of the chain (the prompt's last one, the newline after `<|im_start|>assistant`, then
    the pieces) embeds to its own basis vector, and lm_head maps that vector to the next token with a
    logit margin of 400: sampling picks it with probability 1 - e^-400 per token. A token may appear
    once in the chain, and the chain holds at most hidden_size + 1 tokens."""
    import torch
    from tokenizers import AddedToken

    tok = tiny_tokenizer()
    vocab = tok.get_vocab()
    tok.add_tokens([AddedToken(p, special=False, normalized=False) for p in pieces if p not in vocab])
    model = tiny_model(len(tok), seed, tie_word_embeddings=False)
    prompt_end = tok.apply_chat_template([{"role": "user", "content": "x"}], add_generation_prompt=True, tokenize=False)
    chain = [tok(prompt_end[-1])["input_ids"][-1], *tok.convert_tokens_to_ids([*pieces, "<|im_end|>"])]
    assert len(set(chain)) == len(chain), "a token appears twice in the chain"
    assert model.config.hidden_size >= len(chain) - 1
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embed, head = model.model.embed_tokens.weight, model.lm_head.weight
        head.zero_()
        for i, (token, following) in enumerate(zip(chain, chain[1:])):
            embed[token] = 0.0
            embed[token, i] = 1.0
            head[following, i] = 100.0  # the final RMSNorm scales e_i to 4 e_i (hidden size 16): logit 400
    return tok, model


def save_pair(tokenizer: Any, model: Any, folder: Path) -> Path:
    """`save_pretrained` of both into `folder`, as a model folder on the Hub has it (what `transformers
    serve FOLDER` loads): generation stops at the tokenizer's end of turn (`<|im_end|>`) and samples, as
    Qwen3's generation_config.json says (`transformers serve` samples only when the model's generation
    config does: a request's temperature alone never turns sampling on)."""
    model.generation_config.do_sample = True
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    tokenizer.save_pretrained(str(folder))
    model.save_pretrained(str(folder))
    return folder


def tiny_grpo_config(output_dir: Any, **settings: Any) -> Any:
    """TRL's GRPOConfig for a tiny training run on CPU: two generations of one prompt per batch, seed 0,
    the dataset's order, a log line every step, nothing saved or reported. `settings` add to or
    override these (max_steps, max_completion_length, ...)."""
    from trl import GRPOConfig

    base: Dict[str, Any] = dict(
        output_dir=str(output_dir),
        per_device_train_batch_size=2,
        num_generations=2,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=0,
        shuffle_dataset=False,
    )
    return GRPOConfig(**{**base, **settings})
