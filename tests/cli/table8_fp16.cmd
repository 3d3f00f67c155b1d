table
8
--dtype
fp16
--exact
