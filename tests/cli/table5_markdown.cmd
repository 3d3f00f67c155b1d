table
5
--format
markdown
