check
--model
falcon-rw-7b
--heads
1
--ctx
16777216
