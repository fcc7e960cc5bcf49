"""The core every layer stands on: the stage contract and its runner, the record schema and the one join,
JSON Lines storage, the metric registry, and the rules for files, folders, processes and credentials."""
