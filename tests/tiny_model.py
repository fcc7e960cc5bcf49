"""A tiny random causal LM with a real byte-level BPE tokenizer, built in ~1 s.

Real enough to load, serve with `transformers serve`, train and generate; it
writes gibberish, so tests check structure, never quality.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + '<|im_end|>' }}"
    "{% endgeneration %}{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}{{ '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

CORPUS = [
    "The lattice parameter of the perovskite film was 3.91 angstrom after annealing at 450 C.",
    "Question: what limits the ionic conductivity? Answer: grain boundaries and impurity phases.",
    "Q1: Why does doping raise the band gap? A1: Substitution shrinks the unit cell.",
    "Keywords: sodium-ion cathode, layered oxide, cycling stability, capacity retention",
]


#: What the model built with ``says=REPLY`` writes (its tokens are all distinct, see below).
REPLY = "Q: Why anneal? A) Grains grow at 450 C."  # one QA pair, as the parser reads it


def build_tiny_model(out: str | Path, arch: str = "llama", says: str | None = None) -> Path:
    """A random model, or with ``says`` one that answers every prompt ending in a newline with exactly
    that text and then stops (a real, complete reply: ``finish_reason == "stop"``)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS * 20,
        trainers.BpeTrainer(
            vocab_size=512, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = 4096
    fast.save_pretrained(out)

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
    )
    if says is not None:
        config.tie_word_embeddings = False
    model = LlamaForCausalLM(config)
    model.generation_config.max_new_tokens = 32
    if says is not None:
        _make_bigram_chain(model, fast, says)
    model.save_pretrained(out)
    return out


def _make_bigram_chain(model, tok, text: str) -> None:
    """Turn the model into a bigram table that walks "\n" -> text -> EOS.

    With the attention and MLP outputs zeroed the residual stream is the current token's embedding,
    so the next token is decided by the current one alone; each step of the chain gets a logit margin
    of ~2 x 64 over noise of ~2 x 8, which holds at any sampling temperature. The walk needs distinct
    tokens (a repeated token would have two successors).
    """
    import torch

    ids = tok(text, add_special_tokens=False)["input_ids"]
    newline = tok("\n", add_special_tokens=False)["input_ids"]
    chain = newline + ids + [tok.eos_token_id]
    if len(set(chain)) != len(chain):
        raise ValueError(f"{text!r} repeats a token; a bigram chain needs distinct tokens")
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        emb = model.model.embed_tokens.weight
        normed = emb / emb.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt()  # what the final RMSNorm gives
        head = torch.randn_like(emb) * 0.01
        for cur, nxt in zip(chain, chain[1:]):
            head[nxt] += 2.0 * normed[cur]
        model.lm_head.weight.copy_(head)
