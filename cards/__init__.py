"""The cards: the dataset card, the model card and the dataset card's human-review section, each rendered from
its template beside it (``dataset_card.md``, ``model_card.md``)."""

CITATION = """\
@article{wan2024sciqag,
  title   = {SciQAG: A Framework for Auto-Generated Science Question Answering Dataset with Fine-grained Evaluation},
  author  = {Wan, Yuwei and Liu, Yixuan and Ajith, Aswathy and Grazian, Clara and Hoex, Bram and Zhang, Wenjie and Kit, Chunyu and Xie, Tong and Foster, Ian},
  journal = {arXiv preprint arXiv:2405.09939},
  year    = {2024}
}
"""  # noqa: E501 - the paper's BibTeX entry as published
