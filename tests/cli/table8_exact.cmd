table
8
--exact
