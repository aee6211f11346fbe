"""The same RoBERTa-base inference with each batch padded to a multiple of 64 tokens (pad_to_multiple_of=64, as a
tokenizer's padding does it): a handful of lengths in all, so the kernels chosen or compiled for a length are reused."""

import time

import torch
from torch.utils.data import DataLoader
from transformers import RobertaConfig, RobertaForSequenceClassification

PAD = 1


def reviews(count, vocab_size):
    """Token ids as RoBERTa's tokenizer leaves them (<s> ... </s>), most reviews short, a few long."""
    generator = torch.Generator().manual_seed(0)
    lengths = torch.exp(torch.empty(count).normal_(3.6, 0.6, generator=generator)).clamp(8, 512).long()
    return [torch.cat([torch.tensor([0]), torch.randint(4, vocab_size, (int(n) - 2,), generator=generator),
                       torch.tensor([2])]) for n in lengths]


def collate(batch, multiple=64):
    input_ids = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=PAD)
    input_ids = torch.nn.functional.pad(input_ids, (0, -input_ids.shape[1] % multiple), value=PAD)
    return input_ids, (input_ids != PAD).long()


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    config = RobertaConfig(num_labels=2, max_position_embeddings=514, type_vocab_size=1)
    model = RobertaForSequenceClassification(config).to(device=device, dtype=torch.float16).eval()
    loader = DataLoader(reviews(64 * 60, config.vocab_size), batch_size=64, collate_fn=collate)

    predictions = []
    warmup, timed = 5, 50
    with torch.inference_mode():
        for step, (input_ids, attention_mask) in enumerate(loader):
            if step == warmup:
                torch.cuda.synchronize()
                start = time.perf_counter()
            logits = model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device)).logits
            predictions.append(logits.argmax(dim=-1))
            if step == warmup + timed - 1:
                break
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    labels = torch.cat(predictions).cpu()
    print(f"label counts {torch.bincount(labels, minlength=2).tolist()}")
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
