"""People check the judge: `sciqag review` (rate and correct pairs in the browser, saved to WORK/reviews.jsonl)
and the decisions that publish applies."""
