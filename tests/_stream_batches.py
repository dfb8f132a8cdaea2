"""The three micro-batches the streaming tests feed (classic and Connect), with their known answers."""

HEADER = "pedido_id,cliente_id,status,valor,data_pedido,email\n"
BATCHES = [
    # batch 0: order 1 clean; order 2 twice (both rows invalid: duplicate key within the batch)
    ["1,101,PAGO,150.00,2026-11-01,ana@example.com", "2,102,CRIADO,230.00,2026-11-02,bruno@example.com",
     "2,102,CRIADO,230.00,2026-11-02,bruno@example.com"],
    # batch 1: order 3 has no customer; 7 clean; 1 again (published by batch 0: duplicate across batches)
    ["3,,PAGO,99.90,2026-11-03,carla@example.com", "7,107,PAGO,70.00,2026-11-07,gabi@example.com",
     "1,101,PAGO,150.00,2026-11-01,ana@example.com"],
    # batch 2: 8 and 9 clean; 5 has a negative amount
    ["8,108,PAGO,80.00,2026-11-08,hugo@example.com", "9,109,CANCELADO,90.00,2026-11-09,iris@example.com",
     "5,105,PAGO,-100.00,2026-11-05,elisa@example.com"],
]
SCHEMA = "pedido_id string, cliente_id string, status string, valor string, data_pedido string, email string"
