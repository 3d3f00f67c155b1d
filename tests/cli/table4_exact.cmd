table
4
--exact
