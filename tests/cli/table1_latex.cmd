table
1
--format
latex
