check
--model
falcon-rw-7b
--heads
65536
--ctx
16777216
