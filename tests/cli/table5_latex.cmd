table
5
--format
latex
