"""The QA text contract shared by every stage that asks for, reads or trains on QA pairs: the prompts,
the parser of replies, the instruction format, and the rules for questions that lean on their source."""
