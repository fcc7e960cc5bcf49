"""Fine-tuning the SciQAG generator: TRL SFTTrainer + PEFT + DeepSpeed (`sciqag train`).

Light to import: torch, transformers, TRL and PEFT load only when a training config is built or
training starts.
"""
