"""Node classification with PyTorch Geometric, in the style of OGB's ogbn-arxiv GCN baseline: a synthetic citation
graph of arxiv's size (169,343 papers, 1.17 M citations made undirected, 128 features, 40 subjects), a three-layer
GCN with batch norm and dropout, full-batch training with Adam, and the train/valid/test accuracy evaluated after
every epoch."""

import time

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv
from torch_geometric.utils import to_undirected

device = torch.device("cuda")


def synthetic_arxiv(num_nodes=169_343, num_edges=1_166_243, num_features=128, num_classes=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, num_classes, (num_nodes,), generator=g)
    centers = torch.randn(num_classes, num_features, generator=g)
    x = centers[y] + 2.0 * torch.randn(num_nodes, num_features, generator=g)
    # Papers cite papers of their own subject more often than others.
    src = torch.randint(0, num_nodes, (num_edges,), generator=g)
    same = torch.rand(num_edges, generator=g) < 0.6
    by_class = torch.argsort(y)
    starts = torch.searchsorted(y[by_class], torch.arange(num_classes))
    counts = torch.bincount(y, minlength=num_classes)
    pick = starts[y[src]] + (torch.rand(num_edges, generator=g) * counts[y[src]]).long()
    dst = torch.where(same, by_class[pick], torch.randint(0, num_nodes, (num_edges,), generator=g))
    edge_index = to_undirected(torch.stack([src, dst]))
    perm = torch.randperm(num_nodes, generator=g)
    split = {"train": perm[:90_941], "valid": perm[90_941:120_740], "test": perm[120_740:]}
    return Data(x=x, edge_index=edge_index, y=y.unsqueeze(1)), split


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers, dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(in_channels, hidden_channels, cached=True)])
        self.bns = torch.nn.ModuleList([torch.nn.BatchNorm1d(hidden_channels)])
        for _ in range(num_layers - 2):
            self.convs.append(GCNConv(hidden_channels, hidden_channels, cached=True))
            self.bns.append(torch.nn.BatchNorm1d(hidden_channels))
        self.convs.append(GCNConv(hidden_channels, out_channels, cached=True))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for conv, bn in zip(self.convs[:-1], self.bns):
            x = conv(x, edge_index)
            x = bn(x)
            x = F.relu(x)
            x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.convs[-1](x, edge_index)
        return x.log_softmax(dim=-1)


def train(model, data, train_idx, optimizer):
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)[train_idx]
    loss = F.nll_loss(out, data.y.squeeze(1)[train_idx])
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def test(model, data, split_idx):
    model.eval()
    out = model(data.x, data.edge_index)
    y_pred = out.argmax(dim=-1, keepdim=True)
    return [(y_pred[idx] == data.y[idx]).float().mean().item() for idx in split_idx.values()]


def main():
    torch.manual_seed(0)
    data, split_idx = synthetic_arxiv()
    data = data.to(device)
    train_idx = split_idx["train"].to(device)
    split_idx = {k: v.to(device) for k, v in split_idx.items()}
    model = GCN(data.num_features, 256, 40, num_layers=3, dropout=0.5).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(5):
        train(model, data, train_idx, optimizer)
        test(model, data, split_idx)
    epochs = 100
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        loss = train(model, data, train_idx, optimizer)
        train_acc, valid_acc, test_acc = test(model, data, split_idx)
        if epoch % 25 == 0:
            print(f"Epoch: {epoch:02d}, Loss: {loss:.4f}, Train: {100 * train_acc:.2f}%, "
                  f"Valid: {100 * valid_acc:.2f}% Test: {100 * test_acc:.2f}%")
    elapsed = time.perf_counter() - start
    print(f"{elapsed / epochs * 1000:.3f} ms/step")


if __name__ == "__main__":
    main()
