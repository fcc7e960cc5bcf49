"""Stages put together: the pipeline of `sciqag run`, its scale-out on datatrove, the benchmark run and the
augmentation rounds of training."""
