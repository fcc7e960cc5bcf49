"""What an HTML page holds besides the paper, as patterns: reference lists, figures, the abstract, site
chrome and notices, menus, hidden parts, the journal's notes, citation links. ``html_clean.py`` applies them."""

import re

from sciqag_dataset.builders.ingest.normalize import MONTH

REF_CONTAINER = re.compile(
    r"(?:^|[\s_-])(?:ref-?list|references?|refs|bibliograph\w*|citation-?list|backmatter-refs)"
    r"(?:$|[\s_-])",
    re.I,
)
# the notes by their DPUB-ARIA role, as RASH, pandoc and EPUB pages mark them (the reference list's role,
# "doc-bibliography", is read with the reference lists)
NOTES_ROLE = re.compile(r"^doc-(?:endnotes?|footnotes?)$")
# a sentence saying where the paper's data or code are: a DOI it shows is theirs, not the paper's
# (addresses and DOIs before it written as "LINK", their dots no sentence's end)
RESOURCE_DOI = re.compile(
    r"\b(?:data|code|software|scripts?|materials?|datasets?|notebooks?|toolkit|packages?|library|hyperparameters"
    r"|figures|supplementa\w+)"
    r"\b[^.]{0,150}\b(?:available|deposited|archived|accessible|stored|found|published|released|cited|at)\b"
    r"[^.]{0,100}$",
    re.I,
)
# a heading that names the authors or the date (pandoc's title block: <h2 class="author">), not a section
FRONT_HEADING_CLASS = re.compile(r"(?:^|\s)(?:authors?|date|affiliations?)(?:$|\s)", re.I)
TITLE_BLOCK = re.compile(r"header|title", re.I)  # the box a title block sits in
# a note set inside its paragraph, shown beside it or on hover (LaTeXML's footnotes, arXiv's HTML), and its mark
INLINE_NOTE = re.compile(r"(?:^|\s)ltx_note_(?:outer|mark)(?:$|\s)")
FIGURE_LIKE = re.compile(
    r"(?:^|[\s_-])(?:fig(?:ure)?s?|tables?|tbl|caption\w*|table-wrap|figure-wrap)"
    r"(?:$|[\s_-])",
    re.I,
)
ABSTRACT = re.compile(r"(?:^|[\s_-])abstract(?:$|[\s_-])", re.I)
# a lead paragraph ("article-lead", "standfirst"): the abstract when the page marks none other
LEAD = re.compile(r"(?:^|[\s_-])(?:lead|standfirst|dek|synopsis)(?:$|[\s_-])", re.I)
# the element a page names as its article's first paragraph (Nature's letters: their summary paragraph): wherever
# the page's other headings stand
FIRST_PARAGRAPH = re.compile(r"(?:^|[\s_-])first-?paragraph(?:$|[\s_-])", re.I)
# a caption by its start: "Figure 2.", "Fig. 3:", "Table 1 |"; a label alone starts one beside an image or table
CAPTION_START = re.compile(r"^(?:fig(?:ure)?|table|scheme|chart|plate)\.?\s*S?\d+[a-z]?\s*[.:|]", re.I)
# a reference entry: a year and an author with initials ("Quill, A.", "A. Quill"), or a "[12]" start
ENTRY_AUTHOR = re.compile(
    r"[A-Z][\w'’-]+,\s+(?:[A-Z]\.\s?-?){1,3}|(?:[A-Z]\.\s?-?){1,3}\s?[A-Z][\w'’-]+|^\[\d{1,3}\]\s"
)
# not the abstract: a graphical abstract, highlights, ACS's synopsis (the table of contents' blurb)
NOT_ABSTRACT = re.compile(r"graphical|toc|teaser|keywords|highlights|synopsis", re.I)
REFERENCES_HEADING = re.compile(
    r"^\s*(?:\d+\.?\s*)?(?:references(?: and notes)?|bibliography|notes and references|"
    r"literature cited)\s*$",
    re.I,
)
NUMBERING = re.compile(r"^\s*(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.|[A-H]\.)\s+")
CHROME = re.compile(
    r"^(?:jump to (?:main )?content|skip to (?:main )?content|top of page|back to top|article tools|"
    r"download pdf|cite this|share|permissions|metrics|(?:next|previous) section|"
    r"\+? ?author affiliations|view (?:full text|pdf)|open in (?:a )?new tab|↵)$",
    re.I,
)
# a heading of the paper's sections, not its title (the first <h1> of a page whose title is only in <title>)
SECTION_HEADING = re.compile(r"(?:abstract|summary|introduction|background|contents|keywords)\W*", re.I)
# sections of the page that are not the paper's: its outline, links to other papers
# the paper's back matter, after its last section
BACK_MATTER_HEADING = re.compile(
    r"^(?:acknowledge?ments?|funding|author (?:contributions?|information)|conflicts? of interest|competing "
    r"interests?|ethics|data (?:and code )?availability|notes|abbreviations|references)\b",
    re.I,
)
NOT_PAPER_HEADING = re.compile(
    r"^(?:article outline|outline|contents|table of contents|in this article|"
    r"related (?:articles|content)|recommended articles|cited by|similar articles|"
    r"other articles from this special issue|this article belongs to a special issue|"
    r"more from this journal|article metrics|altmetric|keywords|supporting information|"
    r"supplementary (?:material|information|data)|additional files?|"
    r"electronic supplementary material)\s*:?$",
    re.I,
)  # the whole heading
# a site's notices about itself, found inside a paragraph
NOTICE = re.compile(
    r"screen reader users|phasing out support for|uses javascript to|enable javascript|"
    r"we use cookies|cookie (?:policy|settings)|your browser (?:is|does)",
    re.I,
)
# site navigation that is not in a <nav>: menus, sidebars, toolbars, breadcrumbs
# a whole class token, "site-nav" too; not a layout's modifier ("has-sidebar", "with-menu", "first-no-nav")
NAV_CLASS = re.compile(
    r"^(?!(?:[\w-]*[-_])?(?:has|with|no|show|is|open)[-_])(?:[\w-]+[-_])?(?:nav|navbar|navigation|menu|submenu|"
    r"sidebar|breadcrumbs?|toolbar|masthead|banner|cookies?)$",
    re.I,
)
# a journal's notes about the article, not its text (as the PDF reader drops them); the article's history also
# without a colon when a date with a month's name follows ("Received February 22, 2016.", "Accepted 12 May 2016")
ABOUT = re.compile(
    r"^[↵‡†*∗\s]*(?:(?:citation|editor|academic editor|handling editor|received|accepted|published"
    r"(?: online)?|e-?mail|correspond(?:ence|ing author)|funding|competing interests|data availability"
    r"|present address|key ?words|index terms)\s*:|copyright\s*(?::|©|\d)|©|"
    r"(?:received|revised|accepted|published(?: online)?)\s+(?:on\s+)?"
    rf"(?:\d{{1,2}}\s+{MONTH},?\s+\d{{4}}|{MONTH}\s+\d{{1,2}},?\s+\d{{4}})|"
    r"in original form\b)",
    re.I,
)
HIDDEN = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
# hidden on the screen: a print-only part (ScholarMarkdown's first-page footer: venue, e-mails, the copyright)
HIDDEN_CLASS = re.compile(
    r"(?:^|\s)(?:hidden|hide|d-none|is-hidden|visually-hidden|sr-only|print-?only|visible-print)(?:$|\s)", re.I
)
# a link to the reference list (not "xref-fig" or "xref-disp-formula": figures and equations keep their numbers)
CITATION_LINK = re.compile(r"(?:^|\s)(?:ref|bibr|cite|citation|xref-bibr)(?:$|\s)|showRef|ref-link", re.I)
ARTICLE_LINK = re.compile(r"/doi/|doi\.org/10\.|/articles?/|/content/article", re.I)  # many: a list of papers
DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "nav",
    "aside",
    "button",
    "svg",
    "iframe",
    "template",
    "menu",
    "figure",
    "figcaption",
    "table",
    "img",
    "math-display",
)
