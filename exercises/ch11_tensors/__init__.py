"""Chapter 11 · From scalars to tensors: a tensor engine with broadcasting backward, backprop by
hand through a real network, and training to a target with your own engine."""
