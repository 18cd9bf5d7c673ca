"""MNN's legacy `tokenizer.txt` formats ("430 0" to "430 3", spec section 5) and the pre-430
mnn-llm vocab files: readers that build the IR from them and writers that refuse, with a reason,
what a legacy runtime (MNN <= 3.4.1) cannot represent."""
