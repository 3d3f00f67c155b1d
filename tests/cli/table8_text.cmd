table
8
--format
text
