"""Batch inference with a BERT-base sequence classifier from transformers in fp16: batches of 128 padded
sequences of up to 128 tokens, the predicted labels collected on the GPU and copied to the host once at the end."""

import time

import torch
from transformers import BertConfig, BertForSequenceClassification


def make_batches(count, batch_size, max_len, vocab_size, device):
    generator = torch.Generator(device=device).manual_seed(0)
    batches = []
    for _ in range(count):
        lengths = torch.randint(16, max_len + 1, (batch_size,), device=device, generator=generator)
        positions = torch.arange(max_len, device=device)
        attention_mask = (positions[None, :] < lengths[:, None]).long()
        input_ids = torch.randint(1000, vocab_size, (batch_size, max_len), device=device, generator=generator)
        batches.append((input_ids * attention_mask, attention_mask))
    return batches


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    config = BertConfig(num_labels=3)
    model = BertForSequenceClassification(config).to(device=device, dtype=torch.float16).eval()
    batches = make_batches(8, 128, 128, config.vocab_size, device)

    predictions = []
    with torch.inference_mode():
        for i in range(3):
            model(*batches[i])
        torch.cuda.synchronize()
        timed = 40
        start = time.perf_counter()
        for i in range(timed):
            input_ids, attention_mask = batches[i % len(batches)]
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
            predictions.append(logits.argmax(dim=-1))
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    labels = torch.cat(predictions).cpu()
    print(f"label counts {torch.bincount(labels, minlength=3).tolist()}")
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
