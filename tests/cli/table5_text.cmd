table
5
--format
text
