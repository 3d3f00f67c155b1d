table
1
--format
markdown
