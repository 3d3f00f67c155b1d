check
--model
bloom-560m,baichuan2-13b-chat
--ctx
512
--max-blind-heads
40
