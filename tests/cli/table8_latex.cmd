table
8
--format
latex
