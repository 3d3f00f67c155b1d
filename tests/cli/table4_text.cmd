table
4
--format
text
