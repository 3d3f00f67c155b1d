table
8
--dtype
bf17
