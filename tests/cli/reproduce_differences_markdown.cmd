reproduce
--differences
--format
markdown
