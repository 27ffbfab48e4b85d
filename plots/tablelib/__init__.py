"""What plots/tables.py and the figure scripts share: reading plots/data/*.csv
(data), picking benchmark sets and the fastest rows (sets), Markdown output
(markdown), and the generated sections of the READMEs (chapters, sections,
front). Standard library only."""
