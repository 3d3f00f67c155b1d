table
4
--format
latex
